#include "recipes/lowering.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <string>

#include "recipes/role_rules.hpp"
#include "recipes/unmatched_keep.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/scaling/rowwise.hpp"

namespace fp8lab::recipes {
namespace {

namespace sc = sim::scaling;

sc::TorchaoRecipe torchao_recipe(Scaling scaling) {
  if (scaling == Scaling::tensorwise) return sc::TorchaoRecipe::kTensorwise;
  if (scaling == Scaling::rowwise) return sc::TorchaoRecipe::kRowwise;
  return sc::TorchaoRecipe::kRowwiseWithGwHp;
}

// torchao's table picks the granularity; format and power-of-2 stay the recipe's (whose defaults
// are that table's: default_fp8_format, default_power_2_scales).
void plan_torchao(sc::QuantizePlan& p, Scaling scaling, sc::Operand operand, sc::Gemm gemm) {
  const sc::OperandCast cast = sc::torchao_operand_cast(torchao_recipe(scaling), gemm, operand);
  switch (cast.scaling) {
    case sc::OperandScaling::kTensorwise: p.kind = sc::QuantizeKind::kTensorwiseTorchao; return;
    case sc::OperandScaling::kAxiswise:
      p.kind = sc::QuantizeKind::kAxiswiseTorchao;
      p.block = p.axis == sc::ScaleAxis::kRowwise ? sc::BlockShape{1, 0} : sc::BlockShape{0, 1};
      return;
    case sc::OperandScaling::kHighPrecision: break;
  }
  p.kind = sc::QuantizeKind::kHighPrecision;
}

}  // namespace

std::optional<sc::DelayedScalingConfig> delayed_scaling(const Recipe& recipe) {
  if (!uses_amax_history(recipe.scaling)) return std::nullopt;
  sc::DelayedScalingConfig config;
  config.margin = recipe.margin;  // 64-bit in both: never narrowed
  config.fp8_format = recipe.fp8_format;
  config.amax_history_len = recipe.amax_history_len;
  config.amax_compute_algo = recipe.amax_compute_algo;
  config.interval = recipe.interval;
  sc::validate(config);
  return config;
}

namespace {

// The one switch over the scaling: the plan of `operand` of `gemm` under the recipe's own fields
// (per_role is applied by the callers, which pass the role's recipe).
sc::QuantizePlan scaling_plan(const Recipe& recipe, sc::Operand operand, sc::Gemm gemm) {
  sc::QuantizePlan p;
  p.axis = sc::scale_axis(gemm, operand);  // throws for an operand the GEMM lacks
  p.format = operand == sc::Operand::kGradOutput ? sc::backward_format(recipe.fp8_format)
                                                 : sc::forward_format(recipe.fp8_format);
  p.pow2 = recipe.power_2_scales;
  switch (recipe.scaling) {
    case Scaling::delayed:
      p.kind = sc::QuantizeKind::kDelayed;
      p.pow2 = false;
      p.delayed = *delayed_scaling(recipe);
      return p;
    case Scaling::current: p.kind = sc::QuantizeKind::kCurrentTe; return p;
    case Scaling::tensorwise:
    case Scaling::rowwise:
    case Scaling::rowwise_with_gw_hp: plan_torchao(p, recipe.scaling, operand, gemm); return p;
    case Scaling::block:
      p.kind = sc::QuantizeKind::kBlockTe;
      p.block = sc::te_block_shape(gemm, operand);
      return p;
    case Scaling::mxfp4:
    case Scaling::mxfp6_e2m3:
    case Scaling::mxfp6_e3m2:
      p.format = *subbyte_element_format(recipe.scaling);  // every operand
      [[fallthrough]];
    case Scaling::mxfp8:
      p.kind = sc::QuantizeKind::kMx;
      p.pow2 = false;
      p.block = sc::mx_block_shape(p.axis);
      // TE's MXFP8BlockScaling.enable_2d_quantization (pytorch/quantization.py): its forward-mode
      // quantizers of a Linear's weight take 32 x 32 tiles, i.e. the weight in fprop and dgrad
      // (both read the one 2-D quantization); the backward-mode ones (grad_output) never.
      if (recipe.mx_2d && recipe.scaling == Scaling::mxfp8 && operand == sc::Operand::kWeight) {
        p.block = {sc::kMxBlockSize, sc::kMxBlockSize};
      }
      p.mx_mode = recipe.mx_scale_mode;
      if (uses_torchao_version(recipe)) p.torchao = recipe.torchao_version;
      // Tseng et al.'s MXFP4 backward (mxfp4 only, sim/scaling/mx_dither.hpp): every operand of
      // the dgrad and wgrad GEMMs, the forward untouched (Megatron-LM.patch, BW_USE_MXFP4 = 3).
      p.stochastic_rounding = recipe.mx_stochastic_rounding && gemm != sc::Gemm::kFprop;
      p.rht = recipe.mx_rht && gemm != sc::Gemm::kFprop;
      return p;
    case Scaling::nvfp4:
      p.kind = sc::QuantizeKind::kNvfp4;
      p.format = sim::Format::E2M1;
      p.pow2 = false;
      p.block = sc::nvfp4_block_shape(gemm, operand, recipe.nvfp4_2d);
      p.nvfp4_mode = recipe.nvfp4_mode;
      // TE's NVFP4BlockScaling QParams (pytorch/quantization.py; fp4-formats.md §4): the RHT on
      // the columnwise copies of the input and the gradient, i.e. the wgrad GEMM's operands, whose
      // K is the token dimension; stochastic rounding on both copies of the gradient.
      p.rht = recipe.nvfp4_rht && gemm == sc::Gemm::kWgrad && operand != sc::Operand::kWeight;
      p.stochastic_rounding = recipe.nvfp4_stochastic_rounding &&
                              operand == sc::Operand::kGradOutput;
      return p;
    case Scaling::static_:
      p.kind = sc::QuantizeKind::kStatic;
      p.pow2 = false;
      p.static_scale = static_cast<float>(recipe.static_scale);  // an fp32 value (fields.cpp)
      return p;
  }
  throw std::invalid_argument("recipes::plan: unknown scaling " +
                              std::to_string(static_cast<int>(recipe.scaling)));
}

}  // namespace

sc::QuantizePlan plan(const Recipe& recipe, sc::Operand operand, sc::Gemm gemm) {
  if (recipe.per_role.empty()) return scaling_plan(recipe, operand, gemm);
  return scaling_plan(role_recipe(recipe, role_of(operand, gemm)), operand, gemm);
}

ElementwisePlan elementwise_plan(const Recipe& recipe, BeyondGemm tensor) {
  ElementwisePlan p;
  p.precision = tensor == BeyondGemm::kNormAffine ? recipe.norm_affine_precision
                                                  : recipe.activation_precision;
  if (p.precision != sc::ElementwisePrecision::kMx) return p;
  if (recipe.scaling != Scaling::mxfp8) {
    throw std::invalid_argument(
        std::string("recipes::elementwise_plan: ") +
        (tensor == BeyondGemm::kNormAffine ? "norm_affine_precision" : "activation_precision") +
        " = mx needs scaling mxfp8, got " + std::string(name(recipe.scaling)));
  }
  p.mx = scaling_plan(recipe, sc::Operand::kInput, sc::Gemm::kFprop);
  return p;
}

namespace {

// override_linear_precision's flag for `gemm`, or backward_override's for dgrad and wgrad (any
// value but none runs the backward unquantized, TE's linear.py).
bool overridden(const Recipe& recipe, sc::Gemm gemm) {
  const OverrideLinearPrecision& o = recipe.override_linear_precision;
  if (gemm == sc::Gemm::kFprop) return o.fprop;
  if (recipe.backward_override != BackwardOverride::kNone) return true;
  return gemm == sc::Gemm::kDgrad ? o.dgrad : o.wgrad;
}

}  // namespace

bool gemm_runs_fp8(const Recipe& recipe, sc::Gemm gemm) {
  return !overridden(recipe, gemm) &&
         plan(recipe, sc::gemm_operands(gemm).a, gemm).kind != sc::QuantizeKind::kHighPrecision;
}

namespace {

bool matches(const std::string& pattern, std::string_view layer) {
  try {
    return std::regex_match(std::string(layer), std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("keep_high_precision: '" + pattern +
                                "' is not a valid regular expression (" + e.what() + ")");
  }
}

bool any_matches(const std::vector<std::string>& patterns, std::string_view layer) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pattern) { return matches(pattern, layer); });
}

}  // namespace

bool keeps_high_precision(const Recipe& recipe, std::string_view layer, sc::Gemm gemm) {
  const KeepHighPrecision& k = recipe.keep_high_precision;
  if (k.empty()) return false;
  const std::vector<std::string>& per_gemm = gemm == sc::Gemm::kFprop   ? k.fprop
                                             : gemm == sc::Gemm::kDgrad ? k.dgrad
                                                                        : k.wgrad;
  return any_matches(k.layers, layer) || any_matches(per_gemm, layer);
}

sc::QuantizePlan plan(const Recipe& recipe, std::string_view layer, sc::Operand operand,
                      sc::Gemm gemm) {
  sc::QuantizePlan p =
      recipe.per_role.empty()
          ? scaling_plan(recipe, operand, gemm)
          : scaling_plan(role_recipe(recipe, layer, role_of(operand, gemm)), operand, gemm);
  if (keeps_high_precision(recipe, layer, gemm)) {
    // As torchao's table does for a high-precision GEMM: kind alone decides, the rest stays.
    p.kind = sc::QuantizeKind::kHighPrecision;
  }
  return p;
}

bool gemm_runs_fp8(const Recipe& recipe, std::string_view layer, sc::Gemm gemm) {
  if (recipe.per_role.empty()) {
    return gemm_runs_fp8(recipe, gemm) && !keeps_high_precision(recipe, layer, gemm);
  }
  if (overridden(recipe, gemm)) return false;
  if (keeps_high_precision(recipe, layer, gemm)) return false;
  const sc::GemmOperands operands = sc::gemm_operands(gemm);
  const bool a = plan(recipe, layer, operands.a, gemm).kind != sc::QuantizeKind::kHighPrecision;
  const bool b = plan(recipe, layer, operands.b, gemm).kind != sc::QuantizeKind::kHighPrecision;
  if (a != b) {
    throw std::invalid_argument(
        "per_role: the " + std::string(sc::to_string(gemm)) + " GEMM of '" + std::string(layer) +
        "' would quantize its " + sc::to_string(a ? operands.a : operands.b) + " and keep its " +
        sc::to_string(a ? operands.b : operands.a) +
        " in high precision (rowwise_with_gw_hp keeps wgrad high); give both operands of a GEMM "
        "scalings that quantize it");
  }
  return a;
}

bool runs_dequantized(const Recipe& recipe, std::string_view layer, sc::Gemm gemm) {
  if (recipe.backward_override != BackwardOverride::kDequantized || gemm == sc::Gemm::kFprop) {
    return false;
  }
  const OverrideLinearPrecision& o = recipe.override_linear_precision;
  if (gemm == sc::Gemm::kDgrad ? o.dgrad : o.wgrad) return false;
  return !keeps_high_precision(recipe, layer, gemm) &&
         gemm_runs_fp8(recipe, layer, sc::Gemm::kFprop);
}

GemmAccumulation gemm_accumulation(const Recipe& recipe, std::string_view layer) {
  if (recipe.per_role.empty()) return recipe.gemm;
  GemmAccumulation out = recipe.gemm;
  for (const sc::Gemm gemm : {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
    Accumulation GemmAccumulation::*member = gemm == sc::Gemm::kFprop   ? &GemmAccumulation::fprop
                                             : gemm == sc::Gemm::kDgrad ? &GemmAccumulation::dgrad
                                                                        : &GemmAccumulation::wgrad;
    const sc::GemmOperands operands = sc::gemm_operands(gemm);
    const Recipe a = role_recipe(recipe, layer, role_of(operands.a, gemm));
    const Recipe b = role_recipe(recipe, layer, role_of(operands.b, gemm));
    if (a.gemm.*member != b.gemm.*member) {
      throw std::invalid_argument(
          "per_role: the " + std::string(sc::to_string(gemm)) + " GEMM of '" + std::string(layer) +
          "' reads its " + sc::to_string(operands.a) + " under scaling " +
          std::string(name(a.scaling)) + " (GEMM model " + std::string(name(a.gemm.*member)) +
          ") and its " + sc::to_string(operands.b) + " under " + std::string(name(b.scaling)) +
          " (" + std::string(name(b.gemm.*member)) +
          "); give both operands of a GEMM scalings with the same GEMM model");
    }
    out.*member = a.gemm.*member;
  }
  return out;
}

std::vector<std::string> unmatched_keep_patterns(const Recipe& recipe,
                                                 const std::vector<std::string>& layers) {
  const KeepHighPrecision& k = recipe.keep_high_precision;
  std::vector<std::string> unmatched;
  for (const auto* list : {&k.layers, &k.fprop, &k.dgrad, &k.wgrad}) {
    for (const std::string& pattern : *list) {
      const bool matched = std::any_of(layers.begin(), layers.end(), [&](const std::string& layer) {
        return matches(pattern, layer);
      });
      if (!matched && std::find(unmatched.begin(), unmatched.end(), pattern) == unmatched.end()) {
        unmatched.push_back(pattern);
      }
    }
  }
  return unmatched;
}

}  // namespace fp8lab::recipes
