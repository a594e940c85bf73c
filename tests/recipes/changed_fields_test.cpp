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
  CHECK(change.field == "amax_compute_algo");
  CHECK(change.asked == "most_recent");
  CHECK(change.runs == "max");
  CHECK(change.why.find("DelayedScaling's default is max") != std::string::npos);
  CHECK(change.reference == "te-accelerate.md §1.2");
  CHECK(change_text(change) == "amax_compute_algo: most_recent -> max (" + change.why + "; " +
                                   change.reference + ")");
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
