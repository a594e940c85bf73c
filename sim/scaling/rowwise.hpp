// Rowwise / axiswise scaling: torchao Float8LinearConfig recipes "tensorwise", "rowwise" and
// "rowwise_with_gw_hp" (docs/numerics.md §2.3; torchao-mx.md §1.2, §2.1-2.4). One scale per row or per
// column of the stored tensor, along the reduction dimension of the GEMM (sim/settings.hpp),
// each computed with torchao's amax_to_scale (float64 division, 1e-12 clamp, NaN propagating;
// sim/scaling/current.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "sim/format.hpp"
#include "sim/scaling/common.hpp"
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

enum class TorchaoRecipe : std::uint8_t { kTensorwise, kRowwise, kRowwiseWithGwHp };
const char* to_string(TorchaoRecipe recipe);

// How torchao casts one operand of one GEMM (its CastConfig for that use).
enum class OperandScaling : std::uint8_t {
  kTensorwise,     // ScalingGranularity.TENSORWISE
  kAxiswise,       // ScalingGranularity.AXISWISE, along scale_axis(gemm, operand)
  kHighPrecision,  // ScalingType.DISABLED: the GEMM runs in high precision
};
const char* to_string(OperandScaling scaling);

struct OperandCast {
  OperandScaling scaling;
  Format format;  // target_dtype
  bool pow2;      // round_scales_to_power_of_2
};

// The recipe table of torchao-mx.md §1.2 (torchao HEAD; pow2 for rowwise_with_gw_hp since v0.13):
//   recipe              input fwd / gw        weight fwd / gi       grad_out gi / gw       pow2
//   tensorwise          T e4m3 / T e4m3       T e4m3 / T e4m3       T e5m2 / T e5m2        no
//   rowwise             A e4m3 / A e4m3       A e4m3 / A e4m3       A e4m3 / A e4m3        yes
//   rowwise_with_gw_hp  A e4m3 / HP           A e4m3 / T e4m3       A e4m3 / HP            yes
// (fwd = fprop, gi = dgrad, gw = wgrad.) Throws std::invalid_argument if `operand` is not an
// operand of `gemm`.
OperandCast torchao_operand_cast(TorchaoRecipe recipe, Gemm gemm, Operand operand);

// Axiswise cast (torchao-mx.md §2.1, §2.3): for each row (kRowwise) or column (kColumnwise) g,
//   amax_g = max |x| over g, NaN propagating;  s_g = torchao_scale_from_amax(amax_g, fp8_max, pow2)
//   q = cast_satfinite(RN(x * s_g));  scale = s_g;  scale_inv = RN(1 / s_g)
// Blocks 1 x cols (kRowwise) or rows x 1 (kColumnwise).
QuantizeResult quantize_axiswise_torchao(std::span<const float> x, std::int64_t rows,
                                         std::int64_t cols, ScaleAxis axis, Format format,
                                         bool pow2);

// One operand of one GEMM under a torchao recipe: the tensorwise or axiswise cast the table says,
// or nullopt when that GEMM runs in high precision.
std::optional<QuantizeResult> quantize_torchao_operand(std::span<const float> x, std::int64_t rows,
                                                       std::int64_t cols, TorchaoRecipe recipe,
                                                       Gemm gemm, Operand operand);

}  // namespace fp8lab::sim::scaling
