// Issue 18 §3 at the recipes level: the keep_high_precision and autoswitch recipe fields (read,
// validated, canonical, shown by explain, in the run id only when set) and the arms of a
// `method: ablate` sweep.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "recipes/ablation.hpp"
#include "recipes/canonical.hpp"
#include "recipes/compatibility.hpp"
#include "recipes/complete_recipe.hpp"
#include "recipes/error.hpp"
#include "recipes/explain.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/recipe_text.hpp"

using namespace fp8lab::recipes;
using fp8lab::testing::message_of;

namespace {

std::string sweep_message_of(const std::string& text) {
  try {
    expand(parse_sweep_text(text, "s.yaml"));
  } catch (const RecipeError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("keep_high_precision: read from a nested mapping, canonical order", "[keep]") {
  const Recipe r = parse_recipe_text(R"(scaling: current
keep_high_precision:
  layers: ['lm_head', 'blocks\.0\..*', 'lm_head']
  fprop: ['blocks\.0\..*', 'x']
  dgrad: ['x', 'y']
  wgrad: ['x']
)",
                                     "r.yaml");
  // Sorted and deduplicated; a layer pattern leaves the GEMM lists; one in all three moves up.
  CHECK(r.keep_high_precision.layers ==
        std::vector<std::string>{"blocks\\.0\\..*", "lm_head", "x"});
  CHECK(r.keep_high_precision.fprop.empty());
  CHECK(r.keep_high_precision.dgrad == std::vector<std::string>{"y"});
  CHECK(r.keep_high_precision.wgrad.empty());
  // The same settings in another order are the same recipe and run.
  const Recipe same = parse_recipe_text(R"(scaling: current
keep_high_precision: {layers: [x, lm_head, 'blocks\.0\..*'], dgrad: [y]}
)",
                                        "r.yaml");
  CHECK(run_id(same) == run_id(r));
}

TEST_CASE("keep_high_precision and autoswitch: run ids of recipes without them unchanged",
          "[keep]") {
  const Recipe plain = parse_recipe_text("scaling: current\n", "r.yaml");
  CHECK(canonical_string(plain).find("keep_high_precision") == std::string::npos);
  CHECK(canonical_string(plain).find("autoswitch") == std::string::npos);
  const Recipe kept =
      parse_recipe_text("scaling: current\nkeep_high_precision: {wgrad: [lm_head]}\n", "r.yaml");
  CHECK(run_id(kept) != run_id(plain));
  CHECK(canonical_string(kept) ==
        canonical_string(plain) +
            ";keep_high_precision={layers: [], fprop: [], dgrad: [], wgrad: [lm_head]}");
  const Recipe switching =
      parse_recipe_text("scaling: current\nautoswitch: {enabled: true}\n", "r.yaml");
  CHECK(canonical_string(switching) ==
        canonical_string(plain) + ";autoswitch={underflow_percent: 5, mse: 0.0001}");
  const Recipe other = parse_recipe_text(
      "scaling: current\nautoswitch: {enabled: true, underflow_percent: 2.5, mse: 1e-3}\n",
      "r.yaml");
  CHECK(other.autoswitch.underflow_percent == 2.5);
  CHECK(other.autoswitch.mse == 1e-3);
  CHECK(run_id(other) != run_id(switching));
}

TEST_CASE("keep_high_precision: explain shows the fields", "[keep]") {
  const std::string text = explain_text(
      "scaling: delayed\nkeep_high_precision: {layers: [lm_head]}\nautoswitch: {enabled: true}\n",
      "r.yaml");
  CHECK_THAT(text, Catch::Contains("keep_high_precision: {layers: [lm_head], fprop: [], dgrad: "
                                   "[], wgrad: []}"));
  CHECK_THAT(text, Catch::Contains("autoswitch: {underflow_percent: 5, mse: 0.0001}"));
}

TEST_CASE("keep_high_precision: bad input names the file, line and field", "[keep]") {
  // The library's own wording of the regex error sits in the parentheses.
  const std::string bad = message_of("keep_high_precision:\n  layers: ['blocks.(0']\n");
  CHECK_THAT(bad, Catch::StartsWith("r.yaml:2: keep_high_precision.layers: is not a valid "
                                    "regular expression ("));
  CHECK_THAT(bad, Catch::EndsWith("): 'blocks.(0'; accepted: a list of regular expressions over "
                                  "whole Linear names, e.g. [\"blocks\\.0\\..*\", \"lm_head\"]"));
  // (recipe text, how its message starts)
  const std::pair<const char*, const char*> cases[] = {
      {"keep_high_precision:\n  wgrad: lm_head\n",
       "r.yaml:2: keep_high_precision.wgrad: wrong type: expected a list"},
      {"keep_high_precision:\n  fprop: ['']\n",
       "r.yaml:2: keep_high_precision.fprop: an empty pattern"},
      {"keep_high_precision:\n  everything: [x]\n",
       "r.yaml:2: keep_high_precision.everything: unknown field"},
      {"autoswitch: {enabled: true, mse: -1}\n",
       "r.yaml:1: autoswitch.mse: out of range, got '-1'"},
      {"autoswitch: {enabled: true, underflow_percent: lots}\n",
       "r.yaml:1: autoswitch.underflow_percent: wrong type: expected a number, got 'lots'"},
      {"autoswitch: {mse: 1e-3}\n",
       "r.yaml:1: autoswitch.mse: is a threshold of the autoswitch rule, which is off"},
  };
  for (const auto& [text, start] : cases) {
    INFO(text);
    CHECK_THAT(message_of(text), Catch::StartsWith(start));
  }
}

TEST_CASE("keep_high_precision: the job file's complete text reads back as the same recipe",
          "[keep]") {
  const Recipe r = parse_recipe_text(R"(scaling: mxfp8
keep_high_precision: {layers: ['.*bad', 'blocks\.0\..*'], wgrad: ['lm_head|head']}
autoswitch: {enabled: true, mse: 2e-4}
)",
                                     "r.yaml");
  const Recipe back = parse_complete_recipe_text(complete_recipe_text(r), "job.json");
  CHECK(back == r);
  CHECK(canonical_string(back) == canonical_string(r));
}

TEST_CASE("keep_high_precision: a GEMM already in high precision keeps no list", "[keep]") {
  Recipe r;
  r.override_linear_precision.wgrad = true;
  r.keep_high_precision.wgrad = {"lm_head"};
  r.keep_high_precision.fprop = {"lm_head"};
  const Canonical c = canonicalize(r);
  CHECK(c.recipe.keep_high_precision.wgrad.empty());
  CHECK(c.recipe.keep_high_precision.fprop == std::vector<std::string>{"lm_head"});
  REQUIRE(c.reasons.size() == 1);
  CHECK_THAT(c.reasons[0], Catch::Contains("keep_high_precision.wgrad changes nothing"));
}

TEST_CASE("autoswitch: a sweep's thresholds without the rule change nothing", "[keep]") {
  Recipe r;
  r.autoswitch.mse = 1e-3;
  const Canonical c = canonicalize(r);
  CHECK(c.recipe == Recipe{});
  REQUIRE(c.reasons.size() == 1);
  CHECK(c.reasons[0] == "autoswitch is off: its thresholds are unused");
}

TEST_CASE("ablation: the arms of every layer, and per GEMM", "[ablate]") {
  CHECK(regex_escape("blocks.0.mlp_fc") == "blocks\\.0\\.mlp_fc");
  CHECK(regex_escape("a(b)*") == "a\\(b\\)\\*");
  Ablation a;
  a.layers = {"l1", "l2.x", "l3"};
  auto arms = ablation_arms(a);
  REQUIRE(arms.size() == 7);
  CHECK(arms[0].label() == "all");
  CHECK(arms[0].settings.empty());
  CHECK(arms[3].label() == "all_but l2.x");
  CHECK(std::get<std::vector<std::string>>(arms[3].settings.at(0).value) ==
        std::vector<std::string>{"l2\\.x"});
  CHECK(arms[4].label() == "only l2.x");
  CHECK(std::get<std::vector<std::string>>(arms[4].settings.at(0).value) ==
        std::vector<std::string>{"l1", "l3"});
  a.per_gemm = true;
  arms = ablation_arms(a);
  REQUIRE(arms.size() == 7 + 3 * 3 * 2);
  CHECK(arms[7].label() == "all_but l1:fprop");
  CHECK(arms[8].label() == "only l1:fprop");
  // only l1:fprop: the other layers whole, and l1's dgrad and wgrad.
  REQUIRE(arms[8].settings.size() == 3);
  CHECK(arms[8].settings[1].key == "keep_high_precision.dgrad");
  CHECK(arms[8].settings[2].key == "keep_high_precision.wgrad");
  a.layers = {"l1", "l1"};
  CHECK_THROWS_AS(ablation_arms(a), RecipeError);
}

TEST_CASE("ablation: method ablate expands into runs of the base recipe", "[ablate]") {
  const SweepExpansion e = expand(parse_sweep_text(R"(
method: ablate
workloads: [mlp]
seeds: [0, 1, 2]
base: {scaling: current}
ablate: {layers: [fc1, fc2, fc3]}
)",
                                                   "s.yaml"));
  // all, then all_but and only of each of 3 layers: 7 distinct recipes per seed.
  CHECK(e.requested.size() == 21);
  CHECK(e.runs.size() == 21);
  CHECK(request_label(e.sweep, e.requested[0]) == "ablate: all");
  CHECK(request_label(e.sweep, e.requested[2]) == "ablate: only fc1");
  CHECK(e.ablation_base == canonical_string(parse_recipe_text("scaling: current\n", "r.yaml")));
  const Recipe& only_fc1 = e.runs[e.requested[2].run].recipe;
  CHECK(only_fc1.keep_high_precision.layers == std::vector<std::string>{"fc2", "fc3"});
  CHECK(e.requested[2].ablation->layer == "fc1");
  // Two layers: "only fc1" is "all but fc2": one run stands for both requests.
  const SweepExpansion two = expand(parse_sweep_text(R"(
method: ablate
workloads: [mlp]
base: {scaling: current}
ablate: {layers: [fc1, fc2]}
)",
                                                     "s.yaml"));
  CHECK(two.requested.size() == 5);
  CHECK(two.runs.size() == 3);
}

TEST_CASE("ablation: sweep errors", "[ablate]") {
  // (sweep text, what its message says)
  const std::pair<const char*, const char*> cases[] = {
      {"method: ablate\nworkloads: [a, b]\nablate: {layers: [x]}\n",
       "workloads: method: ablate takes one workload"},
      {"method: ablate\nworkloads: [a]\nablate: {layers: [x]}\n"
       "parameters:\n  margin: {values: [0, 1]}\n",
       "are not used by method: ablate"},
      {"method: grid\nworkloads: [a]\nablate: {layers: [x]}\n",
       "ablate: applies to method: ablate only"},
      {"method: ablate\nworkloads: [a]\nablate: {layer: [x]}\n", "ablate.layer: unknown key"},
      {"method: ablate\nworkloads: [a]\nablate: {layers: []}\n", "ablate.layers: is empty"},
  };
  for (const auto& [text, says] : cases) {
    INFO(text);
    CHECK_THAT(sweep_message_of(text), Catch::Contains(says));
  }
}

TEST_CASE("keep_high_precision and autoswitch: what the peers run", "[keep]") {
  for (const char* scaling : {"delayed", "mxfp8", "current", "rowwise"}) {
    INFO(scaling);
    const Recipe r = parse_recipe_text(std::string("scaling: ") + scaling +
                                           "\nkeep_high_precision: {wgrad: [lm_head]}\n"
                                           "autoswitch: {enabled: true}\n",
                                       "r.yaml");
    const Compatibility c = compatibility(r);
    // TE's DisableFP8GEMM / torchao's module filter keep the GEMMs: the peer's run keeps them.
    CHECK(c.te_effective.keep_high_precision == r.keep_high_precision);
    // No peer switches on a threshold.
    CHECK_FALSE(c.te_effective.autoswitch.enabled);
    bool quirk = false;
    for (const auto& q : c.quirks) quirk = quirk || q.field == "autoswitch";
    CHECK(quirk);
  }
}
