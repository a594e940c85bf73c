#include "recipes/runs_as.hpp"

#include <fmt/format.h>

#include "recipes/fields.hpp"
#include "recipes/run_source.hpp"

namespace fp8lab::recipes {

std::string_view name(RunsAs runs_as) { return runs_as == RunsAs::asked ? "asked" : "upstream"; }

RunsAs parse_runs_as(std::string_view text, const Site& site, const std::string& field) {
  if (text == "asked") return RunsAs::asked;
  if (text == "upstream") return RunsAs::upstream;
  throw RecipeError(site, field, std::string(text), "unknown value", "asked, upstream",
                    did_you_mean(text, {"asked", "upstream"}));
}

namespace {

// The quirk that explains a change of `field` (a quirk names the field, or its parent as "gemm"
// does for gemm.fprop); null when none does.
const Quirk* quirk_for(const Compatibility& c, const std::string& field) {
  for (const Quirk& q : c.quirks) {
    if (q.field == field || field.rfind(q.field + ".", 0) == 0) return &q;
  }
  return nullptr;
}

}  // namespace

std::vector<Quirk> field_changes(const Compatibility& c) {
  std::vector<Quirk> changes;
  for (const std::string& field : recipe_field_names()) {
    // A field the run recipe does not use is no change: TE's mx_scale_mode te has no torchao
    // version (te_effective keeps the canonical default); the mx_scale_mode quirk names the asked
    // torchao_version.
    if (field == "torchao_version" && !uses_torchao_version(c.te_effective)) continue;
    const std::string asked = field_text(c.asked, field), runs = field_text(c.te_effective, field);
    if (asked == runs) continue;
    const Quirk* q = quirk_for(c, field);
    changes.push_back(
        {field, asked, runs, q == nullptr ? "" : q->why, q == nullptr ? "" : q->reference});
  }
  return changes;
}

std::string change_text(const Quirk& q) {
  return q.why.empty()
             ? fmt::format("{}: {} -> {}", q.field, q.asked, q.runs)
             : fmt::format("{}: {} -> {} ({}; {})", q.field, q.asked, q.runs, q.why, q.reference);
}

std::string refusal(const Compatibility& c) {
  if (c.trains_without_fp8) {
    // Why, from the mixed_precision quirk compatibility() records with trains_without_fp8.
    const Quirk* q = quirk_for(c, "mixed_precision");
    return fmt::format("{} runs no FP8 for mixed_precision {}{}", c.runner, *c.trains_without_fp8,
                       q == nullptr ? "" : fmt::format(" ({}; {})", q->why, q->reference));
  }
  if (c.runnable) return {};
  // The quirks that refuse (runs ""); the others are changes, listed by explain.
  std::vector<std::string> refusals;
  for (const Quirk& q : c.quirks) {
    if (q.runs.empty()) {
      refusals.push_back(
          fmt::format("{}: {} -> refused ({}; {})", q.field, q.asked, q.why, q.reference));
    }
  }
  return fmt::format("{} refuses these settings ({})", c.runner, fmt::join(refusals, "; "));
}

RecipeToRun recipe_to_run(const Compatibility& c, RunsAs runs_as, const Site& site,
                          const std::string& context) {
  if (runs_as == RunsAs::asked) return {c.asked, {}};
  if (c.trains_without_fp8) {
    // What accelerate trains is the high-precision model: fp8lab's baseline, not an FP8 run.
    throw RecipeError(site, "mixed_precision", *c.trains_without_fp8,
                      context + refusal(c) + ", so there is no FP8 recipe to run as upstream; got",
                      fmt::format("mixed_precision: fp8, or --as asked (the fp8_config as "
                                  "written), or what accelerate trains: {}",
                                  no_fp8_baseline_command(c)));
  }
  if (!c.runnable) {
    throw RecipeError(site, "runs_as", "upstream",
                      fmt::format("{}{}, so they cannot run as", context, refusal(c)),
                      "settings the peer accepts, or runs_as: asked");
  }
  // One change per recipe field that differs; quirks that change no field (e.g. TE defaults
  // accelerate cannot set) are for `fp8lab explain`, not for the run.
  return {c.te_effective, field_changes(c)};
}

RecipeToRun read_recipe_to_run(const std::string& path, RunsAs runs_as) {
  return recipe_to_run(read_source_file(path).compatibility, runs_as, {path, 0});
}

}  // namespace fp8lab::recipes
