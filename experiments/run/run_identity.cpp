// One run's identity, as its record names it: the recipe's fields and canonical text, its label
// for reports, and the baseline it is compared with (declared in run_executor.hpp). Kept apart
// from run_executor.cpp, which executes runs: these are names, computed before a run starts and
// kept by a failed record.
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

#include "experiments/run/run_executor.hpp"
#include "experiments/run/run_ids.hpp"
#include "recipes/fields.hpp"
#include "recipes/role_rules.hpp"
#include "recipes/schedule.hpp"

namespace fp8lab::experiments {
namespace {

std::map<std::string, std::string> recipe_fields(const recipes::Recipe& recipe) {
  std::map<std::string, std::string> fields;
  for (const auto& key : recipes::recipe_field_names()) {
    fields[key] = recipes::field_text(recipe, key);
  }
  return fields;
}

}  // namespace

std::string baseline_run_id(const RunRequest& request) {
  return placed_run_id(
      baseline_run_id(request.workload, request.seed, request.high_precision, request.steps),
      request.backend);
}

std::string recipe_label(const recipes::Recipe& r) {
  using recipes::Scaling;
  // Appends (not operator+ chains): GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  std::string label(recipes::name(r.scaling));
  auto add = [&label](std::string_view word) { label.append(" ").append(word); };
  auto add_number = [&label](const char* tag, std::int64_t v) {
    label.append(" ").append(tag).append(std::to_string(v));
  };
  if (recipes::is_mx(r.scaling)) add(recipes::name(r.mx_scale_mode));
  // torchao-0.18 and torchao-main rows of one mode would otherwise read the same.
  if (recipes::uses_torchao_version(r)) add(recipes::name(r.torchao_version));
  // NVFP4's arms (te or torchao, and TE's recipe parts) differ only in these fields.
  if (r.scaling == Scaling::nvfp4) {
    add(recipes::name(r.nvfp4_mode));
    if (r.nvfp4_2d) add("2d");
    if (r.nvfp4_rht) add("rht");
    if (r.nvfp4_stochastic_rounding) add("sr");
  }
  // Static scaling's arms differ in their fixed scale (1 unless set).
  if (r.scaling == Scaling::static_ && r.static_scale != 1.0) {
    std::ostringstream scale;
    scale << "s" << r.static_scale;
    add(scale.str());
  }
  if (r.mx_stochastic_rounding) add("sr");
  if (r.mx_rht) add("rht64");
  if (r.mx_2d) add("2d");
  // A sub-byte scaling's element format is its own (fp8_format is refused with it).
  if (!recipes::subbyte_element_format(r.scaling)) add(recipes::name(r.fp8_format));
  if (recipes::uses_amax_history(r.scaling)) {
    add_number("m", r.margin);
    add_number("h", r.amax_history_len);
    add(recipes::name(r.amax_compute_algo));
    if (r.interval != 1) add_number("i", r.interval);
  }
  if (!r.override_linear_precision.none()) {
    std::string hp = "hp:";
    if (r.override_linear_precision.fprop) hp.append("fprop,");
    if (r.override_linear_precision.dgrad) hp.append("dgrad,");
    if (r.override_linear_precision.wgrad) hp.append("wgrad,");
    hp.pop_back();
    add(hp);
  }
  if (r.backward_override != recipes::BackwardOverride::kNone) {
    add(r.backward_override == recipes::BackwardOverride::kDequantized ? "bwd:dequantized"
                                                                       : "bwd:high_precision");
  }
  if (!(r.gemm == recipes::default_gemm_accumulation(r.scaling))) {
    std::string acc = "acc:";
    acc.append(recipes::name(r.gemm.fprop)).append("/").append(recipes::name(r.gemm.dgrad));
    acc.append("/").append(recipes::name(r.gemm.wgrad));
    add(acc);
  }
  if (recipes::has_power_2_option(r.scaling) &&
      r.power_2_scales != recipes::default_power_2_scales(r.scaling)) {
    add(r.power_2_scales ? "pow2" : "no-pow2");
  }
  if (r.use_autocast_during_eval) add("fp8-eval");
  // Quantization beyond the GEMMs (recipes/README.md): rows differing only there read apart.
  const auto beyond_gemm = [&add](std::string tag, recipes::ElementwisePrecision p) {
    if (p != recipes::ElementwisePrecision::kHigh) add(tag.append(recipes::name(p)));
  };
  beyond_gemm("norm:", r.norm_affine_precision);
  beyond_gemm("act:", r.activation_precision);
  // keep_high_precision: the patterns themselves (ablation arms differ only here).
  const auto add_patterns = [&](const char* tag, const std::vector<std::string>& patterns) {
    if (patterns.empty()) return;
    std::string text = tag;
    for (const auto& p : patterns) text.append(text.back() == ':' ? "" : ",").append(p);
    add(text);
  };
  add_patterns("hp-layers:", r.keep_high_precision.layers);
  add_patterns("hp-fprop:", r.keep_high_precision.fprop);
  add_patterns("hp-dgrad:", r.keep_high_precision.dgrad);
  add_patterns("hp-wgrad:", r.keep_high_precision.wgrad);
  if (r.autoswitch.enabled) add("autoswitch");
  if (!r.per_role.empty()) add("per_role:" + recipes::per_role_text(r.per_role));
  // A precision schedule (recipes/schedule.hpp): each later stage and where it starts.
  for (const auto& stage : r.schedule) {
    add("| from");
    add(recipes::start_text(stage.start));
    label.append(":");
    add(stage.recipe ? recipe_label(*stage.recipe) : std::string(recipes::kHighPrecisionStage));
  }
  return label;
}

void RunIdentity::apply_to(RunRecord& record) const {
  const auto copy = [](auto& to, const auto& from) {
    if (from.present()) to = from;
  };
  copy(record.recipe, recipe);
  copy(record.recipe_fields, recipe_fields);
  copy(record.recipe_canonical, recipe_canonical);
  copy(record.recipe_label, recipe_label);
  copy(record.baseline_run_id, baseline_run_id);
  copy(record.null_arm, null_arm);
  copy(record.perturbation, perturbation);
}

RunIdentity recipe_identity(const RunRequest& request) {
  const auto& recipe = request.recipe.value();
  RunIdentity identity;
  identity.recipe = recipe_fields(recipe);
  identity.recipe_fields = recipes::recipe_field_names();
  identity.recipe_canonical = recipes::canonical_string(recipe);
  identity.recipe_label = request.recipe_label.empty() ? recipe_label(recipe)
                                                       : request.recipe_label;
  identity.baseline_run_id = baseline_run_id(request);
  return identity;
}

}  // namespace fp8lab::experiments
