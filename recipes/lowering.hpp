// The lowering: a recipe becomes one QuantizePlan per Linear tensor and GEMM
// (sim/scaling/plan.hpp), the way torchao's Float8LinearConfig spells out a cast config per
// operand and GEMM. This is the only place that switches on a recipe's Scaling to choose a
// quantizer; the backends in experiments/linear only execute plans (sim::scaling::quantize,
// gpu::scaling::quantize, and the stateful delayed kind). Adding a recipe means adding its case
// here and its row in tests/recipes/lowering_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "recipes/recipe.hpp"
#include "sim/scaling/plan.hpp"
#include "sim/settings.hpp"

namespace fp8lab::recipes {

// How `recipe` quantizes `operand` as an operand of `gemm`:
//   scaling             kind                 blocks (along the GEMM's K)      format, pow2
//   delayed             kDelayed             per tensor (the pass slot's scale) fp8_format
//   current             kCurrentTe           per tensor                      fp8_format, power_2
//   tensorwise          torchao's table (sim::scaling::torchao_operand_cast): tensorwise, per
//   rowwise              tensor, or axiswise, one scale per row / column along K; kHighPrecision
//   rowwise_with_gw_hp   where the table keeps the GEMM in high precision;   fp8_format, power_2
//   block               kBlockTe             te_block_shape: weight 128x128, others 1x128/128x1
//   mxfp8               kMx                  mx_block_shape: 1x32 / 32x1     mx_scale_mode,
//                                            (weight 32x32 with mx_2d)       torchao_version
//   mxfp4, mxfp6_e2m3,  kMx                  as mxfp8                        as mxfp8, format
//   mxfp6_e3m2                                                               E2M1/E2M3/E3M2;
//                                            mxfp4: stochastic_rounding with mx_stochastic_rounding
//                                            and rht with mx_rht on the dgrad and wgrad operands
//   nvfp4               kNvfp4               nvfp4_block_shape: 1x16 / 16x1, nvfp4_mode, E2M1
//                                            weight 16x16 with nvfp4_2d; rht on wgrad's input
//                                            and grad_output with nvfp4_rht; stochastic_rounding
//                                            on grad_output with nvfp4_stochastic_rounding
// The format is the forward one of fp8_format for input and weight, the backward one for
// grad_output (HYBRID: E4M3 / E5M2); the sub-byte scalings use their element format for every
// operand (subbyte_element_format). override_linear_precision and backward_override are not
// applied here (gemm_runs_fp8, runs_dequantized). Throws std::invalid_argument when `operand` is not an operand of `gemm`, or
// for a delayed recipe whose settings are out of range (delayed_scaling).
// With per_role rules (role_rules.hpp), the plan is that of the role's recipe (role_recipe): the
// rules without `match` apply; a rule with one throws std::invalid_argument (only a Linear's name
// decides it: use the per-layer plan below, or for_layer).
sim::scaling::QuantizePlan plan(const Recipe& recipe, sim::scaling::Operand operand,
                                sim::scaling::Gemm gemm);

// The delayed-scaling settings (and update rule) of a delayed recipe, validated; nullopt for a
// stateless scaling. Throws std::invalid_argument naming the field and value when one is out of
// range (sim::scaling::validate).
std::optional<sim::scaling::DelayedScalingConfig> delayed_scaling(const Recipe& recipe);

// The tensors outside the GEMMs that a recipe may quantize (Recipe::norm_affine_precision,
// activation_precision).
enum class BeyondGemm : std::uint8_t { kNormAffine, kActivation };

// How `recipe` quantizes such a tensor: its precision, and for kMx the plan, which is the fprop
// input's (mxfp8: 1 x 32 blocks along the last dimension, the forward format, mx_scale_mode and
// torchao_version), so that a LayerNorm weight or a GeLU output is blocked exactly as a Linear's
// input of the same width would be. Throws std::invalid_argument for kMx under a scaling other
// than mxfp8 (readers refuse it; canonicalize runs it high).
struct ElementwisePlan {
  sim::scaling::ElementwisePrecision precision = sim::scaling::ElementwisePrecision::kHigh;
  sim::scaling::QuantizePlan mx{};  // kMx only
};
ElementwisePlan elementwise_plan(const Recipe& recipe, BeyondGemm tensor);

// Whether `gemm` runs in FP8 under `recipe`: not overridden by override_linear_precision (nor, for
// dgrad and wgrad, by a backward_override other than none), and
// its operands planned as quantized (torchao rowwise_with_gw_hp keeps wgrad in high precision).
bool gemm_runs_fp8(const Recipe& recipe, sim::scaling::Gemm gemm);

// Per Linear: whether recipe.keep_high_precision keeps `gemm` of the Linear named `layer` (its
// fully qualified name) in high precision: a pattern of `layers` or of that GEMM's list matches
// the whole name (std::regex_match, ECMAScript). The patterns were validated when read; one that
// does not compile here throws std::invalid_argument naming it.
bool keeps_high_precision(const Recipe& recipe, std::string_view layer, sim::scaling::Gemm gemm);

// The plan of `operand` of `gemm` in the Linear named `layer`: kHighPrecision where
// keeps_high_precision, else the plan of the recipe of that Linear and role (role_rules.hpp:
// role_recipe; without per_role, plan(recipe, operand, gemm)).
sim::scaling::QuantizePlan plan(const Recipe& recipe, std::string_view layer,
                                sim::scaling::Operand operand, sim::scaling::Gemm gemm);

// gemm_runs_fp8 for the Linear named `layer`: the GEMM runs in FP8 under the recipe and is not
// kept in high precision for that layer. What Fp8Linear executes. With per_role, both operands'
// plans decide; throws std::invalid_argument naming the Linear when one operand would be
// quantized and the other not.
bool gemm_runs_fp8(const Recipe& recipe, std::string_view layer, sim::scaling::Gemm gemm);

// Whether `gemm` (dgrad or wgrad) of the Linear named `layer` runs in high precision on the
// forward's quantized operands dequantized (backward_override dequantized; TE's linear.py): the
// fprop GEMM's input codes for wgrad, its weight codes for dgrad. False where the fprop GEMM does
// not run in FP8 (no codes), or where override_linear_precision or keep_high_precision keep the
// GEMM in high precision (then on the unquantized operands).
bool runs_dequantized(const Recipe& recipe, std::string_view layer, sim::scaling::Gemm gemm);

// The accumulation model of each GEMM of the Linear named `layer`: recipe.gemm, or with per_role
// that of the recipe of the GEMM's operands (a rule that changes the scaling brings that
// scaling's default models). Throws std::invalid_argument naming the Linear, the GEMM and both
// scalings when its two operands' recipes disagree.
GemmAccumulation gemm_accumulation(const Recipe& recipe, std::string_view layer);

}  // namespace fp8lab::recipes
