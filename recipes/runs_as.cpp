#include "recipes/runs_as.hpp"

#include <fmt/format.h>

#include "recipes/accelerate.hpp"
#include "recipes/fields.hpp"
#include "recipes/recipe_file.hpp"

namespace fp8lab::recipes {

std::string_view name(RunsAs runs_as) {
  return runs_as == RunsAs::asked ? "asked" : "upstream";
}

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

RecipeToRun recipe_to_run(const Compatibility& c, RunsAs runs_as, const Site& site,
                          const std::string& context) {
  if (runs_as == RunsAs::asked) return {c.asked, {}};
  if (!c.runnable) {
    std::vector<std::string> refusals;
    for (const Quirk& q : c.quirks) {
      refusals.push_back(fmt::format("{}: {} -> {} ({}; {})", q.field, q.asked,
                                     q.runs.empty() ? "refused" : q.runs, q.why, q.reference));
    }
    throw RecipeError(site, "runs_as", "upstream",
                      fmt::format("{}{} refuses these settings ({}), so they cannot run as", context,
                                  c.runner, fmt::join(refusals, "; ")),
                      "settings the peer accepts, or runs_as: asked");
  }
  // One line per recipe field that differs; quirks that change no field (e.g. TE defaults
  // accelerate cannot set) are for `fp8lab explain`, not for the run.
  RecipeToRun out{c.te_effective, {}};
  for (const std::string& field : recipe_field_names()) {
    const std::string asked = field_text(c.asked, field), runs = field_text(c.te_effective, field);
    if (asked == runs) continue;
    const Quirk* q = quirk_for(c, field);
    out.changes.push_back(q == nullptr ? fmt::format("{}: {} -> {}", field, asked, runs)
                                       : fmt::format("{}: {} -> {} ({}; {})", field, asked, runs,
                                                     q->why, q->reference));
  }
  return out;
}

RecipeToRun read_recipe_to_run(const std::string& path, RunsAs runs_as) {
  const std::string text = read_recipe_text(path);
  const Compatibility c = looks_like_accelerate_config(text)
                              ? compatibility(parse_accelerate_config_text(text, path))
                              : compatibility(parse_recipe_text(text, path));
  return recipe_to_run(c, runs_as, {path, 0});
}

}  // namespace fp8lab::recipes
