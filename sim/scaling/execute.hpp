// The reference executor of a QuantizePlan (sim/scaling/plan.hpp): the sim/scaling/ quantizer the
// plan names, with its format, blocks, axis, power-of-2 rule and MX mode and version.
//   kCurrentTe          quantize_current_te
//   kTensorwiseTorchao  quantize_tensorwise_torchao
//   kAxiswiseTorchao    quantize_axiswise_torchao along plan.axis
//   kBlockTe            quantize_block_te in plan.block (fp32 input, amax_epsilon 0)
//   kMx                 quantize_mx along plan.axis, or quantize_mx_2d for 32 x 32 blocks; with
//                       plan.rht, of mx_rht_bf16(x, plan.axis, the caller's sign mask); with
//                       plan.stochastic_rounding (E2M1), quantize_mx_dither_scale with the
//                       caller's stream (sim/scaling/mx_dither.hpp, Tseng et al.); on the
//                       calling thread
//   kNvfp4              quantize_nvfp4 in plan.block with plan.nvfp4_mode (on the calling thread:
//                       its per-tensor scale needs the whole tensor); with plan.rht, of
//                       random_hadamard_transform_bf16(x, RhtAxis::kRows, TE's sign vector), whose
//                       tensor (and amax) the result then describes; with
//                       plan.stochastic_rounding, rounded stochastically with the caller's stream
//   kStatic             quantize_per_tensor with plan.static_scale (no amax measured; the
//                       statistics count what saturates and what underflows at that scale)
// gpu::scaling::quantize(plan, ...) must equal it.
#pragma once

#include <cstdint>
#include <span>

#include "sim/scaling/common.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/scaling/plan.hpp"

namespace fp8lab::sim::scaling {

// Throws std::invalid_argument for kDelayed (stateful: DelayedScalingState runs it with its
// slot's scale) and kHighPrecision (nothing to quantize), naming the kind; and as the quantizer
// does for a bad shape or format.
QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols);

// The same result on up to `threads` threads: a plan whose blocks have a fixed number of rows
// (block, MX, rowwise axiswise: plan.block.rows >= 1) quantizes bands of whole block rows on
// their own, since every scale is its block's alone, and the bands' codes and scales are the
// tensor's, in row order; per-tensor plans split their amax and their cast into chunks
// (current.hpp); statistics merge without an order (a max and counts). Columnwise axiswise (one
// scale per whole column) runs on the calling thread. No bit depends on `threads` (>= 1).
QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols, int threads);

// The same, with the Philox stream a plan with stochastic_rounding draws from (nullptr for any
// other plan). A stochastic_rounding plan without a stream throws std::invalid_argument.
QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols, int threads, const StochasticStream* stochastic);

// The same, with the sign mask of the call's Hadamard draw, which a kMx plan with rht transforms
// with (mx_rht_sign_mask; the overload above passes 0, all signs +1).
QuantizeResult quantize(const QuantizePlan& plan, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols, int threads, const StochasticStream* stochastic,
                        std::uint64_t rht_signs);

}  // namespace fp8lab::sim::scaling
