// Block scaling: TE Float8BlockScaling, DeepSeek-V3 style (docs/numerics.md §2.4,
// te-accelerate.md §5.3). 1 x 128 blocks for activations and gradients (128 x 1 for their
// columnwise copy), 128 x 128 tiles for weights; fp32 scales, power of 2 by default; partial edge
// blocks use only their valid elements.
#pragma once

#include <cstdint>
#include <span>

#include "sim/format.hpp"
#include "sim/scaling/blocked.hpp"
#include "sim/scaling/common.hpp"
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

struct BlockScalingConfig {
  BlockShape block = kBlock1x128;
  // QParams.power_2_scale = not $NVTE_FP8_BLOCK_SCALING_FP32_SCALES: on by default.
  bool pow2 = true;
  float amax_epsilon = 0.0f;
  // The dtype the high-precision tensor had (FP32, BF16 or FP16): it picks value_for_inf. The
  // values themselves arrive as fp32 (bf16 and fp16 convert exactly).
  Format input_dtype = Format::FP32;
};

// TE compute_scale_from_types<IType, OType>'s value_for_inf: the input dtype's largest finite
// value (fp32 FLT_MAX, bf16 0x1.FEp127, fp16 65504). Throws std::invalid_argument for other dtypes.
float block_value_for_inf(Format input_dtype);

// Per block (quantize_transpose_{vector,square}_blockwise.cu):
//   amax = max |x| over the block (NaN ignored)
//   s = te_scale_from_amax(amax, fp8_max(format), pow2, amax_epsilon, block_value_for_inf(input))
//   q = cast_satfinite(RN(x * s));  scale_inv = RN(1 / s) (exact for power-of-2 s)
QuantizeResult quantize_block_te(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                 Format format, const BlockScalingConfig& config = {});

// The block copy one GEMM reads (te-accelerate.md §5.3: x_block_scaling_dim = 1,
// w_block_scaling_dim = 2, grad_block_scaling_dim = 1): the weight in 128 x 128 tiles in every
// GEMM; input and grad_output in 1 x 128 or 128 x 1 blocks along the GEMM's K
// (scale_axis(gemm, operand)). `config.block` is ignored; the other fields apply.
QuantizeResult quantize_block_operand(std::span<const float> x, std::int64_t rows,
                                      std::int64_t cols, Gemm gemm, Operand operand, Format format,
                                      const BlockScalingConfig& config = {});

}  // namespace fp8lab::sim::scaling
