// Relayout of sim::QuantizedTensor scales for cuBLASLt (gpu/cublaslt_scale_layout.hpp).
#include "gpu/cublaslt_scale_layout.hpp"

#include <stdexcept>
#include <string>

namespace fp8lab::gpu {
namespace {

std::string block_text(const sim::QuantizedTensor& t) {
  return std::to_string(t.block_rows) + "x" + std::to_string(t.block_cols) + " blocks of a " +
         std::to_string(t.rows) + "x" + std::to_string(t.cols) + " operand";
}

[[noreturn]] void refuse(const sim::QuantizedTensor& t, CublasLtScaleMode mode, const char* wants) {
  throw std::invalid_argument(std::string("cublaslt_scale_layout: ") + to_string(mode) + " needs " +
                              wants + ", got " + block_text(t));
}

}  // namespace

const char* to_string(CublasLtScaleMode mode) {
  switch (mode) {
    case CublasLtScaleMode::kScalar: return "SCALAR_32F";
    case CublasLtScaleMode::kOuterVector: return "OUTER_VEC_32F";
    case CublasLtScaleMode::kVec128: return "VEC128_32F";
    case CublasLtScaleMode::kBlock128x128: return "BLK128x128_32F";
  }
  return "?";
}

std::vector<float> cublaslt_scale_layout(const sim::QuantizedTensor& t, CublasLtScaleMode mode) {
  const std::size_t count = static_cast<std::size_t>(t.scale_rows() * t.scale_cols());
  if (t.scale_inv.size() != count) {
    throw std::invalid_argument("cublaslt_scale_layout: scale_inv holds " +
                                std::to_string(t.scale_inv.size()) + " values, " + block_text(t) +
                                " need " + std::to_string(count));
  }
  const auto rows = static_cast<std::size_t>(t.rows);
  const auto l = static_cast<std::size_t>(t.scale_cols());  // K blocks per row: L = ceil(K/128)
  switch (mode) {
    case CublasLtScaleMode::kScalar:
      if (count != 1) refuse(t, mode, "one block covering the operand");
      return t.scale_inv;
    case CublasLtScaleMode::kOuterVector:
      if (t.block_rows != 1 || l != 1) refuse(t, mode, "1 x K blocks (one scale per row)");
      return t.scale_inv;  // out[r] = scale_inv[r]
    case CublasLtScaleMode::kVec128: {
      if (t.block_rows != 1 || t.block_cols != 128) refuse(t, mode, "1 x 128 blocks");
      if (rows % 4 != 0) refuse(t, mode, "rows a multiple of 4 (cuBLAS: M and N multiples of 4)");
      // Transpose [R][L] -> [L][R]: scale_inv[r * L + l] -> out[l * R + r].
      std::vector<float> out(count);
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t j = 0; j < l; ++j) out[j * rows + r] = t.scale_inv[r * l + j];
      }
      return out;
    }
    case CublasLtScaleMode::kBlock128x128: {
      if (t.block_rows != 128 || t.block_cols != 128) refuse(t, mode, "128 x 128 blocks");
      // Row stride L4 = roundup(L, 4): scale_inv[p * L + l] -> out[p * L4 + l], zeros after L.
      const std::size_t l4 = (l + 3) / 4 * 4, blocks = static_cast<std::size_t>(t.scale_rows());
      std::vector<float> out(blocks * l4, 0.0f);
      for (std::size_t p = 0; p < blocks; ++p) {
        for (std::size_t j = 0; j < l; ++j) out[p * l4 + j] = t.scale_inv[p * l + j];
      }
      return out;
    }
  }
  throw std::invalid_argument("cublaslt_scale_layout: unknown mode");
}

}  // namespace fp8lab::gpu
