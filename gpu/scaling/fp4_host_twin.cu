// gpu::scaling::host_twin for the FP4/FP6 quantizers and gpu::host_twin's RHT
// (gpu/scaling/fp4.hpp): fp4_rules.cuh's per-block code, block after block, on host pointers.
#include <stdexcept>

#include "gpu/scaling/fp4.hpp"
#include "gpu/scaling/fp4_checks.hpp"

namespace fp8lab::gpu {
namespace scaling::host_twin {

void quantize_mx_subbyte(const float* x, std::int64_t rows, std::int64_t cols,
                         std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                         E8M0Mode mode, TorchaoVersion torchao, const Fp4Outputs& out) {
  detail::check_fp4("host_twin::quantize_mx_subbyte", x, rows, cols, block_rows, block_cols, format,
                    out, false);
  const std::int64_t blocks = ((rows + block_rows - 1) / block_rows) *
                              ((cols + block_cols - 1) / block_cols);
  for (std::int64_t b = 0; b < blocks; ++b) {
    switch (format) {
      case Format::E2M1:
        mx_subbyte_block<Format::E2M1>(x, rows, cols, block_rows, block_cols, b, mode, torchao,
                                       out);
        break;
      case Format::E2M3:
        mx_subbyte_block<Format::E2M3>(x, rows, cols, block_rows, block_cols, b, mode, torchao,
                                       out);
        break;
      default:
        mx_subbyte_block<Format::E3M2>(x, rows, cols, block_rows, block_cols, b, mode, torchao,
                                       out);
    }
  }
}

void quantize_nvfp4(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                    std::int64_t block_cols, Nvfp4Mode mode, const Fp4Outputs& out) {
  detail::check_fp4("host_twin::quantize_nvfp4", x, rows, cols, block_rows, block_cols,
                    Format::E2M1, out, true);
  if (mode == Nvfp4Mode::kTorchaoTraining) {
    throw std::invalid_argument(
        "host_twin::quantize_nvfp4: nvfp4 mode torchao_training has no kernel here (sim only)");
  }
  std::uint32_t amax = 0;  // the kernel's fold, in one thread
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const std::uint32_t v = nvfp4_amax_bits(x[i], mode);
    amax = v > amax ? v : amax;
  }
  const Nvfp4Global g = nvfp4_global(bits_float(amax), mode);
  out.global[0] = g.amax;
  out.global[1] = g.encode;
  out.global[2] = g.decode;
  const std::int64_t blocks = ((rows + block_rows - 1) / block_rows) *
                              ((cols + block_cols - 1) / block_cols);
  for (std::int64_t b = 0; b < blocks; ++b) {
    nvfp4_block(x, rows, cols, block_rows, block_cols, b, g, mode, out);
  }
}

std::uint8_t cast_subbyte(float x, sim::Format format, sim::SubbyteSpecials specials) {
  return gpu::cast_subbyte(x, format, specials);
}

float mul_nan_as_x86(float x, float m) { return scaling::mul_nan_as_x86(x, m); }

}  // namespace scaling::host_twin

void host_twin::random_hadamard_transform_bf16(const float* x, std::int64_t rows, std::int64_t cols,
                                               bool chunks_down_rows, std::uint16_t sign_mask,
                                               float* y) {
  scaling::detail::check_rht("host_twin::random_hadamard_transform_bf16", x, rows, cols,
                             chunks_down_rows, y);
  const std::int64_t chunked = chunks_down_rows ? rows : cols;
  const std::int64_t outer = chunks_down_rows ? cols : rows;
  float in[scaling::kRhtSize], out[scaling::kRhtSize];
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t c0 = 0; c0 < chunked; c0 += scaling::kRhtSize) {
      for (int i = 0; i < scaling::kRhtSize; ++i) {
        in[i] = x[scaling::detail::rht_index(o, c0, i, cols, chunks_down_rows)];
      }
      scaling::rht_chunk_bf16(in, sign_mask, out);
      for (int i = 0; i < scaling::kRhtSize; ++i) {
        y[scaling::detail::rht_index(o, c0, i, cols, chunks_down_rows)] = out[i];
      }
    }
  }
}

}  // namespace fp8lab::gpu
