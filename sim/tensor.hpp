// A quantized 2-D tensor as every scaling recipe produces it and every GEMM model consumes it:
// FP8 codes plus one scale per block. One shape covers all the scaling kinds of docs/numerics.md §2:
//
//   kind                        block (rows x cols) for a [R, C] tensor
//   per-tensor (delayed/current) R x C
//   rowwise (one per row)        1 x C          columnwise (one per column)  R x 1
//   block 1x128 / 128x128        1 x 128        128 x 128
//   MXFP8 rowwise / columnwise   1 x 32         32 x 1             2-D weights: 32 x 32
//   MXFP4 / MXFP6                as MXFP8, E2M1 / E2M3 / E3M2 codes, one per byte
//   NVFP4                        1 x 16         16 x 1             2-D weights: 16 x 16
//
// Partial edge blocks hold only their valid elements. The data keeps the high-precision tensor's
// row-major [R, C] layout; which dimension is a GEMM's K is the GEMM's business (sim/gemm/).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/element_count.hpp"
#include "sim/format.hpp"

namespace fp8lab::sim {

struct QuantizedTensor {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  Format format = Format::E4M3;
  std::vector<std::uint8_t> data;  // rows * cols codes, row-major

  std::int64_t block_rows = 0;  // one scale per block_rows x block_cols block
  std::int64_t block_cols = 0;
  // Dequantization factors, ceil(rows / block_rows) x ceil(cols / block_cols), row-major:
  // x ~= decode(q) * scale_inv. For MX blocks these are exactly 2^(e - 127).
  std::vector<float> scale_inv;
  // MX only: the E8M0 codes e behind scale_inv (same shape); empty otherwise.
  std::vector<std::uint8_t> scale_e8m0;
  // The quantization multipliers s of each block (same shape as scale_inv): q = cast(RN(x * s)).
  // Kept beside scale_inv because scale_inv = RN(1/s) loses s for non-power-of-2 scales, and
  // torchao dequantizes by dividing by s (torchao-mx.md §2.3, §2.7). Filled by sim/scaling/.
  std::vector<float> scale;
  // NVFP4 only (sim/scaling/nvfp4.hpp), else empty: the E4M3 codes of the block scales (same
  // shape as scale_inv), and the per-tensor fp32 scale {amax, encode scale, decode scale}.
  std::vector<std::uint8_t> scale_e4m3;
  std::vector<float> global_scale;
  // NVFP4 with the RHT (sim/scaling/plan.hpp `rht`): the codes are of RHT(x) (sim/rht.hpp, TE's
  // sign vector, chunks of 16 down the rows), not of x; statistics compare them with RHT(x).
  bool rht = false;
  // kMx with the RHT (sim/scaling/mx_dither.hpp): the sign mask of the draw the codes were
  // transformed with; a GEMM's two operands must share it. 0 otherwise.
  std::uint64_t rht_signs = 0;

  // Valid once check_shape() passed (block sizes >= 1).
  std::int64_t scale_rows() const { return ceil_div(rows, block_rows); }
  std::int64_t scale_cols() const { return ceil_div(cols, block_cols); }
  // Throws std::invalid_argument naming `function` unless rows * cols fits int64 and equals
  // data.size(), the blocks are >= 1 x 1 and scale_inv holds one value per block: what every
  // reader of a QuantizedTensor it did not make must check before indexing it.
  void check_shape(const char* function) const {
    checked_element_count(function, rows, cols, data.size(), "data.size()");
    if (block_rows < 1 || block_cols < 1) {
      throw std::invalid_argument(std::string(function) + ": block_rows and block_cols must be " +
                                  ">= 1, got " + std::to_string(block_rows) + " x " +
                                  std::to_string(block_cols));
    }
    // At most rows * cols blocks, so this product fits.
    if (static_cast<std::int64_t>(scale_inv.size()) != scale_rows() * scale_cols()) {
      throw std::invalid_argument(std::string(function) + ": scale_inv has " +
                                  std::to_string(scale_inv.size()) +
                                  " values, expected ceil(rows / block_rows) * ceil(cols / "
                                  "block_cols) = " +
                                  std::to_string(scale_rows() * scale_cols()));
    }
  }
  // The dequantization factor of element (r, c).
  float scale_inv_at(std::int64_t r, std::int64_t c) const {
    return scale_inv[static_cast<std::size_t>((r / block_rows) * scale_cols() + c / block_cols)];
  }
  std::uint8_t code_at(std::int64_t r, std::int64_t c) const {
    return data[static_cast<std::size_t>(r * cols + c)];
  }
};

}  // namespace fp8lab::sim
