// What upstream mode changes, as data (RecipeToRun::changed_fields and RequestedCombination::
// changed_fields) for run records, and as the text lines the CLI and --dry-run print: one
// computation, so the two never disagree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "recipes/compatibility.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/run_source.hpp"
#include "recipes/runs_as.hpp"
#include "recipes/sweep.hpp"

using namespace fp8lab::recipes;

namespace {

// One upstream change: its field, the asked and run values, and a part of its reason.
void check_change(const Quirk& change, const std::string& field, const std::string& asked,
                  const std::string& runs, const std::string& why_part) {
  INFO(change_text(change));
  CHECK(change.field == field);
  CHECK(change.asked == asked);
  CHECK(change.runs == runs);
  CHECK_THAT(change.why, Catch::Contains(why_part));
}

}  // namespace

TEST_CASE("upstream changes as data: field, asked and run values, why, reference",
          "[recipes][runs_as]") {
  const RunSource source = read_source_file(std::string(FP8LAB_SOURCE_DIR) +
                                            "/recipes/configs/accelerate-te-default.yaml");
  CHECK(source.kind == SourceKind::accelerate_config);
  CHECK(source.path.front() == '/');
  CHECK(source.text.find("fp8_config") != std::string::npos);
  const RecipeToRun upstream = recipe_to_run(source.compatibility, RunsAs::upstream, source.site);
  REQUIRE(upstream.changed_fields.size() == 1);
  const Quirk& change = upstream.changed_fields[0];
  check_change(change, "amax_compute_algo", "most_recent", "max",
               "DelayedScaling's default is max");
  CHECK(change.reference == "te-accelerate.md §1.2");
  CHECK(change_text(change) ==
        "amax_compute_algo: most_recent -> max (" + change.why + "; " + change.reference + ")");
  // The same changes, not applied, for an asked run (the record's upstream.would_change).
  CHECK(field_changes(source.compatibility).size() == 1);
  const RecipeToRun asked = recipe_to_run(source.compatibility, RunsAs::asked, source.site);
  CHECK(asked.changed_fields.empty());
  CHECK(refusal(source.compatibility).empty());

  // A change no quirk explains keeps its values and leaves why empty; its text has no "(...)".
  CHECK(change_text({"margin", "0", "1", "", ""}) == "margin: 0 -> 1");
}

TEST_CASE("the refusal of an asked run names the runner and every quirk", "[recipes][runs_as]") {
  const Compatibility e5m2 = compatibility(parse_recipe_text("fp8_format: E5M2\n", "e.yaml"));
  REQUIRE_FALSE(e5m2.runnable);
  const std::string why = refusal(e5m2);
  CHECK(why.rfind(e5m2.runner + " refuses these settings (", 0) == 0);
  CHECK(why.find("fp8_format: E5M2 -> refused") != std::string::npos);
  // Only what refuses: the changes the peer would also make are not reasons to refuse. The
  // recipe has one (fp8lab's default most_recent runs as DelayedScaling's max), so the absence
  // below is a real test.
  const auto amax = std::find_if(e5m2.quirks.begin(), e5m2.quirks.end(),
                                 [](const Quirk& q) { return q.field == "amax_compute_algo"; });
  REQUIRE(amax != e5m2.quirks.end());
  CHECK(amax->runs == "max");
  CHECK(why.find("amax_compute_algo") == std::string::npos);
  CHECK_THROWS_WITH(recipe_to_run(e5m2, RunsAs::upstream, {"e.yaml", 0}),
                    Catch::Contains(why + ", so they cannot run as"));
}

TEST_CASE("a sweep's requests carry upstream's changes as data next to their reasons",
          "[recipes][sweep][runs_as]") {
  const SweepExpansion e = expand(parse_sweep_text(R"(
runs_as: upstream
workloads: [w]
parameters:
  amax_history_len: {value: 16}
  amax_compute_algo: {values: [max, most_recent]}
)",
                                                   "u.yaml"));
  REQUIRE(e.requested.size() == 2);
  REQUIRE(e.runs.size() == 1);
  CHECK(e.requested[0].changed_fields.empty());
  REQUIRE(e.requested[1].changed_fields.size() == 1);
  const Quirk& change = e.requested[1].changed_fields[0];
  CHECK(change.field == "amax_compute_algo");
  CHECK(change.asked == "most_recent");
  CHECK(change.runs == "max");
  REQUIRE_FALSE(e.requested[1].reasons.empty());
  CHECK(e.requested[1].reasons[0] == "runs_as upstream: " + change_text(change));
  CHECK(assignment_text(e.sweep, e.requested[1].value_index) ==
        "amax_history_len=16 amax_compute_algo=most_recent");

  // Asked sweeps change nothing.
  const SweepExpansion asked = expand(parse_sweep_text(
      "workloads: [w]\nparameters:\n  amax_compute_algo: {values: [most_recent]}\n", "a.yaml"));
  CHECK(asked.requested[0].changed_fields.empty());
}

TEST_CASE("runs_as upstream over mx_scale_mode floor: one change, a canonical TE recipe",
          "[recipes][sweep][runs_as]") {
  // E4M3, so that the mode is the only field TE changes. TE runs mx_scale_mode te, which has no
  // torchao version: the run recipe keeps the canonical
  // default, torchao_version is not a change of its own (the mx_scale_mode quirk names it), and
  // canonicalization finds nothing to add.
  const SweepExpansion e = expand(parse_sweep_text(R"(
runs_as: upstream
workloads: [w]
base:
  scaling: mxfp8
  fp8_format: E4M3
  torchao_version: torchao-main
parameters:
  mx_scale_mode: {values: [floor]}
)",
                                                   "m.yaml"));
  REQUIRE(e.requested.size() == 1);
  REQUIRE(e.runs.size() == 1);
  const RequestedCombination& request = e.requested[0];
  CHECK(request.recipe.torchao_version == TorchaoVersion::kMain);
  std::string texts;  // every change and reason, for a failure's message
  for (const Quirk& q : request.changed_fields) texts += change_text(q) + "\n";
  for (const std::string& reason : request.reasons) texts += reason + "\n";
  INFO(texts);
  REQUIRE(request.changed_fields.size() == 1);
  const Quirk& change = request.changed_fields[0];
  check_change(change, "mx_scale_mode", "floor", "te", "torchao_version: torchao-main");
  REQUIRE(request.reasons.size() == 1);
  CHECK(request.reasons[0] == "runs_as upstream: " + change_text(change));
  CHECK(e.runs[0].recipe.mx_scale_mode == E8M0Mode::kTe);
  CHECK(e.runs[0].recipe.torchao_version == Recipe{}.torchao_version);
  const Compatibility c = compatibility(request.recipe);
  CHECK(c.te_effective.torchao_version == Recipe{}.torchao_version);
  CHECK(field_changes(c).size() == 1);
}
