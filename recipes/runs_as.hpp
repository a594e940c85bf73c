// Which recipe a run executes: the one the settings ask for (fp8lab's default), or the one the
// peer library really runs for them (accelerate + Transformer Engine, TE, torchao; the
// "te_effective" recipe of compatibility.hpp, with every quirk applied).
//
//   fp8lab run --workload gpt-small --recipe accelerate_config.yaml --as upstream
//   sweep file:  runs_as: upstream
//
// The upstream recipe of an accelerate config comes from the config's settings (accelerate's own
// quirks included, te-accelerate.md §1); that of an fp8lab recipe from compatibility(Recipe).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/compatibility.hpp"
#include "recipes/error.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

enum class RunsAs : std::uint8_t { asked, upstream };

std::string_view name(RunsAs runs_as);
// "asked" or "upstream"; anything else throws RecipeError at `site` naming `field`.
RunsAs parse_runs_as(std::string_view text, const Site& site, const std::string& field);

// A recipe to run and how it differs from what was asked, field by field: `changed_fields` as
// data (one per recipe field: field, asked and runs as recipe-file values, the quirk's why and
// reference, empty when no quirk explains it; change_text makes each a line). Empty for
// RunsAs::asked.
struct RecipeToRun {
  Recipe recipe;
  std::vector<Quirk> changed_fields;
};

// The recipe fields the peer runs differently from what was asked (te_effective vs asked), each
// with the quirk that explains it; what RecipeToRun::changed_fields holds for RunsAs::upstream.
// Quirks that change no recipe field (e.g. TE defaults accelerate cannot set) are not in it, nor
// is a field the run recipe does not use (torchao_version when !uses_torchao_version(te_effective)).
std::vector<Quirk> field_changes(const Compatibility& compatibility);
// One change as a line: "field: asked -> runs (why; reference)".
std::string change_text(const Quirk& change);
// Why the peer will not run these settings as FP8: "<runner> refuses these settings (...)" naming
// every quirk that refuses (Quirk::runs empty), or that it trains without FP8 at all
// (Compatibility::trains_without_fp8); empty when it runs them.
std::string refusal(const Compatibility& compatibility);

// Throws RecipeError at `site` when RunsAs::upstream and the peer refuses to run these settings
// (Compatibility::runnable false), naming every quirk that refuses, or runs no FP8 for them
// (accelerate's mixed_precision other than fp8: the error gives no_fp8_baseline_command, what
// accelerate trains); `context` (e.g. "combination fp8_format=E5M2: ") leads the problem.
RecipeToRun recipe_to_run(const Compatibility& compatibility, RunsAs runs_as, const Site& site,
                          const std::string& context = {});

// An fp8lab recipe file or an accelerate config file (told apart as `fp8lab explain` does), as
// the recipe to run.
RecipeToRun read_recipe_to_run(const std::string& path, RunsAs runs_as);

}  // namespace fp8lab::recipes
