#include "recipes/canonical.hpp"

#include <fmt/format.h>

#include "recipes/role_rules.hpp"

namespace fp8lab::recipes {
namespace {

// The values rule 1 gives every FP8 field: those of a default delayed recipe.
Recipe all_high_precision() {
  Recipe c;
  c.override_linear_precision = {true, true, true};
  c.gemm = {Accumulation::kFp32Seq, Accumulation::kFp32Seq, Accumulation::kFp32Seq};
  c.power_2_scales = false;
  c.module_filter = default_module_filter(Scaling::delayed);
  c.use_autocast_during_eval = false;
  return c;
}

void reset_history(Recipe& r, std::vector<std::string>& reasons) {
  const Recipe defaults;
  std::vector<std::string> ignored;
  if (r.margin != defaults.margin) ignored.push_back(fmt::format("margin={}", r.margin));
  if (r.interval != defaults.interval) ignored.push_back(fmt::format("interval={}", r.interval));
  if (r.amax_history_len != defaults.amax_history_len) {
    ignored.push_back(fmt::format("amax_history_len={}", r.amax_history_len));
  }
  if (r.amax_compute_algo != defaults.amax_compute_algo) {
    ignored.push_back(fmt::format("amax_compute_algo={}", name(r.amax_compute_algo)));
  }
  if (ignored.empty()) return;
  r.margin = defaults.margin;
  r.interval = defaults.interval;
  r.amax_history_len = defaults.amax_history_len;
  r.amax_compute_algo = defaults.amax_compute_algo;
  reasons.push_back(fmt::format("{} keeps no amax history: {} ignored", name(r.scaling),
                                fmt::join(ignored, ", ")));
}

bool gradients_quantized(const Recipe& r) {
  if (r.backward_override != BackwardOverride::kNone) return false;
  const bool wgrad_high_precision = r.override_linear_precision.wgrad ||
                                    r.scaling == Scaling::rowwise_with_gw_hp;
  return !(r.override_linear_precision.dgrad && wgrad_high_precision);
}

// Rule 10: backward_override's spellings. high_precision is override_linear_precision's dgrad and
// wgrad (TE's linear.py: the saved unquantized input and weight); dequantized needs a quantized
// forward and a backward GEMM left to run on its codes, and delayed scaling has no such option.
void canonical_backward_override(Recipe& r, std::vector<std::string>& reasons) {
  OverrideLinearPrecision& o = r.override_linear_precision;
  if (r.backward_override == BackwardOverride::kHighPrecision) {
    o.dgrad = o.wgrad = true;
    r.backward_override = BackwardOverride::kNone;
    reasons.push_back("backward_override high_precision is override_linear_precision's dgrad and "
                      "wgrad: both GEMMs on the unquantized input and weight");
    return;
  }
  if (r.backward_override != BackwardOverride::kDequantized) return;
  if (r.scaling == Scaling::delayed) {
    r.backward_override = BackwardOverride::kNone;
    reasons.push_back("backward_override is not an option of delayed scaling (TE's "
                      "DelayedScaling asserts None): ignored");
  } else if (o.fprop) {
    o.dgrad = o.wgrad = true;
    r.backward_override = BackwardOverride::kNone;
    reasons.push_back("backward_override dequantized with fprop in high precision: no forward "
                      "codes to dequantize, so dgrad and wgrad read the unquantized operands");
  } else if (o.dgrad && o.wgrad) {
    r.backward_override = BackwardOverride::kNone;
    reasons.push_back("backward_override dequantized with dgrad and wgrad overridden: no GEMM "
                      "reads the dequantized codes");
  }
}

Canonical canonicalize_once(const Recipe& input) {
  Canonical out{input, {}};
  Recipe& r = out.recipe;
  auto& reasons = out.reasons;

  canonical_backward_override(r, reasons);  // rule 10, first: it may leave every GEMM high

  if (r.override_linear_precision.all()) {  // rule 1
    const Recipe fixed = all_high_precision();
    if (!(fixed == r)) {
      reasons.push_back(
          "override_linear_precision (true, true, true): every GEMM runs in high precision, so "
          "no FP8 field matters");
    }
    r = fixed;
    return out;
  }
  if (!uses_amax_history(r.scaling)) reset_history(r, reasons);  // rule 2
  if (r.scaling == Scaling::delayed && r.amax_history_len == 1 &&
      r.amax_compute_algo == AmaxComputeAlgo::kMax) {  // rule 3
    r.amax_compute_algo = AmaxComputeAlgo::kMostRecent;
    reasons.push_back("amax_history_len 1: max over one step's amax equals most_recent");
  }
  if (r.scaling == Scaling::rowwise_with_gw_hp && r.override_linear_precision.wgrad) {  // rule 5
    r.override_linear_precision.wgrad = false;
    reasons.push_back("rowwise_with_gw_hp already runs wgrad in high precision: the wgrad "
                      "override changes nothing");
  }
  if (!gradients_quantized(r) && r.fp8_format == Fp8Format::kHybrid) {  // rule 4
    r.fp8_format = Fp8Format::kE4M3;
    reasons.push_back("gradients are never quantized (dgrad and wgrad in high precision): "
                      "HYBRID equals E4M3");
  }
  // Rule 6. The reason is given only for a model other than the scaling's default: replacing the
  // default says nothing a reader needs, and every overridden GEMM would repeat it.
  const GemmAccumulation defaults_of_scaling = default_gemm_accumulation(r.scaling);
  const auto hp_gemm = [&](bool overridden, Accumulation GemmAccumulation::*gemm,
                           const char* gemm_name) {
    Accumulation& a = r.gemm.*gemm;
    if (!overridden || a == Accumulation::kFp32Seq) return;
    if (a != defaults_of_scaling.*gemm) {
      reasons.push_back(fmt::format("{} runs in high precision: gemm.{}={} is unused", gemm_name,
                                    gemm_name, name(a)));
    }
    a = Accumulation::kFp32Seq;
  };
  const bool wgrad_hp = r.override_linear_precision.wgrad ||
                        r.scaling == Scaling::rowwise_with_gw_hp;
  // backward_override dequantized runs dgrad and wgrad in high precision too (on other operands:
  // keep_high_precision's lists below still choose between the two).
  const bool dequantized = r.backward_override == BackwardOverride::kDequantized;
  hp_gemm(r.override_linear_precision.fprop, &GemmAccumulation::fprop, "fprop");
  hp_gemm(r.override_linear_precision.dgrad || dequantized, &GemmAccumulation::dgrad, "dgrad");
  hp_gemm(wgrad_hp || dequantized, &GemmAccumulation::wgrad, "wgrad");

  // Rule 8: keep_high_precision in canonical order, without the GEMMs already in high precision.
  KeepHighPrecision& keep = r.keep_high_precision;
  keep = canonical_keep_high_precision(std::move(keep));
  const auto drop_gemm = [&](bool high_precision, std::vector<std::string>& list,
                             const char* gemm_name) {
    if (!high_precision || list.empty()) return;
    reasons.push_back(fmt::format("{} already runs in high precision: keep_high_precision.{} "
                                  "changes nothing",
                                  gemm_name, gemm_name));
    list.clear();
  };
  drop_gemm(r.override_linear_precision.fprop, keep.fprop, "fprop");
  drop_gemm(r.override_linear_precision.dgrad, keep.dgrad, "dgrad");
  drop_gemm(wgrad_hp, keep.wgrad, "wgrad");
  r.optimizer_states = canonical_optimizer_states(r.optimizer_states, &reasons);
  if (!r.autoswitch.enabled && !(r.autoswitch == Autoswitch{})) {
    r.autoswitch = Autoswitch{};
    reasons.push_back("autoswitch is off: its thresholds are unused");
  }

  const Recipe defaults;  // rule 7
  if (!has_power_2_option(r.scaling) && r.power_2_scales) {
    r.power_2_scales = false;
    reasons.push_back(fmt::format("{} has no power_2_scales option", name(r.scaling)));
  }
  if (!is_mx(r.scaling) && r.mx_scale_mode != defaults.mx_scale_mode) {
    r.mx_scale_mode = defaults.mx_scale_mode;
    reasons.push_back(
        fmt::format("mx_scale_mode applies to the MX scalings only, not {}", name(r.scaling)));
  }
  if (r.scaling != Scaling::nvfp4 &&
      (r.nvfp4_mode != defaults.nvfp4_mode || r.nvfp4_2d != defaults.nvfp4_2d ||
       r.nvfp4_rht != defaults.nvfp4_rht ||
       r.nvfp4_stochastic_rounding != defaults.nvfp4_stochastic_rounding)) {
    r.nvfp4_mode = defaults.nvfp4_mode;
    r.nvfp4_2d = defaults.nvfp4_2d;
    r.nvfp4_rht = defaults.nvfp4_rht;
    r.nvfp4_stochastic_rounding = defaults.nvfp4_stochastic_rounding;
    reasons.push_back(fmt::format(
        "nvfp4_mode, nvfp4_2d, nvfp4_rht and nvfp4_stochastic_rounding apply to nvfp4 only, not {}",
        name(r.scaling)));
  }
  if (r.scaling != Scaling::static_ && r.static_scale != defaults.static_scale) {
    reasons.push_back(fmt::format("static_scale={} applies to scaling static only, not {}",
                                  r.static_scale, name(r.scaling)));
    r.static_scale = defaults.static_scale;
  }
  if (r.nvfp4_2d && r.nvfp4_mode == Nvfp4Mode::kTorchao) {
    r.nvfp4_2d = false;
    reasons.push_back("nvfp4_2d is not an option of nvfp4_mode torchao (torchao's "
                      "nvfp4_quantize, 1 x 16); te and torchao_training have it");
  }
  if ((r.nvfp4_rht || r.nvfp4_stochastic_rounding) && r.nvfp4_mode == Nvfp4Mode::kTorchao) {
    r.nvfp4_rht = false;
    r.nvfp4_stochastic_rounding = false;
    reasons.push_back("nvfp4_rht and nvfp4_stochastic_rounding are options of nvfp4_mode te and "
                      "torchao_training only");
  }
  if (r.scaling != Scaling::mxfp4 && (r.mx_stochastic_rounding || r.mx_rht)) {
    r.mx_stochastic_rounding = false;
    r.mx_rht = false;
    reasons.push_back(fmt::format("mx_stochastic_rounding and mx_rht apply to mxfp4 only, not {}",
                                  name(r.scaling)));
  }
  if (r.scaling != Scaling::mxfp8 && r.mx_2d) {
    r.mx_2d = false;
    reasons.push_back(
        fmt::format("mx_2d is TE's MXFP8BlockScaling.enable_2d_quantization, mxfp8 only, not {}",
                    name(r.scaling)));
  }
  if (r.mx_stochastic_rounding && r.mx_scale_mode != E8M0Mode::kFloor) {
    r.mx_stochastic_rounding = false;
    reasons.push_back("mx_stochastic_rounding is Tseng et al.'s dither_scale, with floor scales "
                      "only");
  }
  if (subbyte_element_format(r.scaling) && r.fp8_format != defaults.fp8_format) {
    r.fp8_format = defaults.fp8_format;
    reasons.push_back(fmt::format("fp8_format is unused by {}", name(r.scaling)));
  }
  if (!uses_torchao_version(r) && r.torchao_version != defaults.torchao_version) {
    r.torchao_version = defaults.torchao_version;
    reasons.push_back(fmt::format(
        "torchao_version applies to the MX torchao scale modes (floor, ceil, even, rceil) only, "
        "not {}",
        is_mx(r.scaling) ? "mx_scale_mode te" : std::string(name(r.scaling))));
  }
  for (auto [member, key] : {std::pair{&Recipe::norm_affine_precision, "norm_affine_precision"},
                             std::pair{&Recipe::activation_precision, "activation_precision"}}) {
    if (r.scaling != Scaling::mxfp8 && r.*member == ElementwisePrecision::kMx) {
      r.*member = defaults.*member;
      reasons.push_back(fmt::format("{}=mx needs mxfp8's MX scale rule, not {}: runs high", key,
                                    name(r.scaling)));
    }
  }
  if (!is_torchao_scaling(r.scaling) &&
      (r.pad_inner_dim != defaults.pad_inner_dim ||
       r.enable_fsdp_float8_all_gather != defaults.enable_fsdp_float8_all_gather)) {
    r.pad_inner_dim = defaults.pad_inner_dim;
    r.enable_fsdp_float8_all_gather = defaults.enable_fsdp_float8_all_gather;
    reasons.push_back(fmt::format("pad_inner_dim and enable_fsdp_float8_all_gather are torchao "
                                  "options, unused by {}",
                                  name(r.scaling)));
  }
  canonicalize_per_role(r, reasons);  // rule 9
  return out;
}

// Rule 9 may fold a per_role rule into the recipe's own fields, which the other rules then see:
// the rules to a fixed point.
Canonical canonicalize_fields(const Recipe& input) {
  Canonical out = canonicalize_once(input);
  for (int pass = 0; pass < 4; ++pass) {
    Canonical again = canonicalize_once(out.recipe);
    if (again.recipe == out.recipe) break;
    out.recipe = std::move(again.recipe);
    out.reasons.insert(out.reasons.end(), again.reasons.begin(), again.reasons.end());
  }
  return out;
}

}  // namespace

// The fields' rules, then the same for every stage of a schedule (schedule.hpp): a stage
// canonicalizes like a recipe of its own, and its reasons say which stage they are of.
Canonical canonicalize(const Recipe& input) {
  Recipe first = input;
  first.schedule.clear();
  Canonical out = canonicalize_fields(first);
  for (std::size_t i = 0; i < input.schedule.size(); ++i) {
    ScheduleStage stage = input.schedule[i];
    if (stage.recipe) {
      Canonical c = canonicalize_fields(*stage.recipe);
      for (auto& reason : c.reasons)
        out.reasons.push_back(fmt::format("schedule stage {}: {}", i + 1, reason));
      stage.recipe = std::make_shared<const Recipe>(std::move(c.recipe));
    }
    out.recipe.schedule.push_back(std::move(stage));
  }
  return out;
}

}  // namespace fp8lab::recipes
