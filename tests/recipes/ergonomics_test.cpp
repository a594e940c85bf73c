// Issue #13 item 5 at the recipes level: accelerate settings from the environment as a run source
// (fp8lab run --env), and an accelerate config that trains without FP8 (mixed_precision bf16 plus
// an fp8_config section) said and done the same way by explain and by runs_as upstream.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "recipes/accelerate.hpp"
#include "recipes/explain.hpp"
#include "recipes/run_source.hpp"
#include "recipes/runs_as.hpp"

using namespace fp8lab::recipes;

TEST_CASE("the environment as a run source: only ACCELERATE_FP8_*, read as accelerate reads it",
          "[recipes][ergonomics]") {
  const std::map<std::string, std::string> env = {{"PATH", "/usr/bin"},
                                                  {"ACCELERATE_MIXED_PRECISION", "fp8"},
                                                  {"ACCELERATE_FP8_MARGIN", "2"},
                                                  {"ACCELERATE_FP8_FORMAT", "E4M3"}};
  const RunSource source = environment_source(env);
  CHECK(source.kind == SourceKind::accelerate_env);
  CHECK(name(source.kind) == "accelerate_env");
  CHECK(source.path.empty());
  // The record's text: the variables that made the recipe, sorted, one NAME=value line each.
  CHECK(source.text == "ACCELERATE_FP8_FORMAT=E4M3\nACCELERATE_FP8_MARGIN=2\n");
  CHECK(source.compatibility.asked.fp8_format == Fp8Format::kE4M3);
  CHECK(source.compatibility.asked.margin == 2);
  // The same settings explain --env reads: the upstream recipe follows TE's defaults.
  CHECK(source.compatibility.te_effective.amax_compute_algo == AmaxComputeAlgo::kMax);
  const RecipeToRun upstream = recipe_to_run(source.compatibility, RunsAs::upstream, source.site);
  CHECK(upstream.recipe.amax_compute_algo == AmaxComputeAlgo::kMax);
  CHECK(upstream.recipe.fp8_format == Fp8Format::kE4M3);

  // The one filter all three readers use (run --env, explain --env, read_accelerate_env):
  // ACCELERATE_MIXED_PRECISION shares the ACCELERATE_ prefix but is not an FP8 input.
  CHECK(accelerate_fp8_variables(env) ==
        std::map<std::string, std::string>{{"ACCELERATE_FP8_FORMAT", "E4M3"},
                                           {"ACCELERATE_FP8_MARGIN", "2"}});
  CHECK(
      accelerate_fp8_variables({{"ACCELERATE_FP8", "x"}, {"accelerate_fp8_margin", "1"}}).empty());

  // A bad value names the variable, as explain --env does.
  CHECK_THROWS_WITH(environment_source({{"ACCELERATE_FP8_FORMAT", "E4M4"}}),
                    Catch::Contains("ACCELERATE_FP8_FORMAT") && Catch::Contains("E4M4"));
}

TEST_CASE("no ACCELERATE_FP8_* variable: an error naming every variable accepted",
          "[recipes][ergonomics]") {
  const std::vector<std::string> accepted = accelerate_env_variables();
  REQUIRE(accepted.size() >= 10);
  CHECK(std::find(accepted.begin(), accepted.end(), "ACCELERATE_FP8_AMAX_HISTORY_LEN") !=
        accepted.end());
  try {
    environment_source({{"PATH", "/usr/bin"}, {"ACCELERATE_MIXED_PRECISION", "fp8"}});
    FAIL("no error");
  } catch (const RecipeError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.rfind("environment: ACCELERATE_FP8_*: no variable is set", 0) == 0);
    for (const auto& var : accepted) CHECK(message.find(var) != std::string::npos);
  }
  // explain --env still explains them, as accelerate's defaults, and says so.
  CHECK(explain_environment({{"PATH", "/usr/bin"}})
            .rfind("accelerate settings from the ACCELERATE_FP8_* environment (none is set: these "
                   "are accelerate's defaults)\n",
                   0) == 0);
  CHECK(explain_environment({{"ACCELERATE_FP8_MARGIN", "1"}}).find("none is set") ==
        std::string::npos);
}

TEST_CASE("run and explain tell an accelerate config from a recipe file the same way",
          "[recipes][ergonomics]") {
  // source_from_text is the one dispatch: read_source_file and explain_text both use it.
  const std::string config = "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  margin: 1\n";
  const RunSource accel = source_from_text(config, "a.yaml");
  CHECK(accel.kind == SourceKind::accelerate_config);
  CHECK(accel.text == config);
  CHECK(accel.path.empty());
  CHECK(accel.site.file == "a.yaml");
  CHECK(accel.compatibility.asked.margin == 1);
  CHECK(explain_text(config, "a.yaml").rfind("accelerate config a.yaml\n", 0) == 0);
  const RunSource recipe = source_from_text("margin: 2\n", "r.yaml");
  CHECK(recipe.kind == SourceKind::recipe_file);
  CHECK(recipe.compatibility.asked.margin == 2);
  CHECK(explain_text("margin: 2\n", "r.yaml").rfind("fp8lab recipe file r.yaml\n", 0) == 0);
  CHECK_THROWS_WITH(source_from_text("margin: x\n", "r.yaml"),
                    Catch::Contains("r.yaml") && Catch::Contains("margin"));
}

TEST_CASE("mixed_precision bf16 with an fp8_config: no FP8, in explain and in runs_as upstream",
          "[recipes][ergonomics]") {
  const std::string config =
      "mixed_precision: bf16\nfp8_config:\n  backend: TE\n  fp8_format: E4M3\n  margin: 1\n";
  const Compatibility c = compatibility(parse_accelerate_config_text(config, "bf16.yaml"));
  REQUIRE(c.trains_without_fp8);
  CHECK(*c.trains_without_fp8 == "bf16");
  CHECK_FALSE(c.runnable);

  // explain shows no FP8 recipe as what accelerate runs, and says what upstream mode does.
  const std::string text = explain_text(config, "bf16.yaml");
  INFO(text);
  CHECK(text.find("== what accelerate + Transformer Engine runs: NO FP8 (mixed_precision: bf16") !=
        std::string::npos);
  CHECK(text.find("DelayedScaling(") == std::string::npos);
  CHECK(text.find("fp8lab run --as upstream refuses this config") != std::string::npos);
  CHECK(text.find("--baseline-only --baseline-precision bf16") != std::string::npos);
  // fp8lab still runs the fp8_config as asked.
  CHECK(text.find("== recipe fp8lab runs (as asked") != std::string::npos);
  CHECK(recipe_to_run(c, RunsAs::asked, {"bf16.yaml", 0}).recipe.fp8_format == Fp8Format::kE4M3);

  // runs_as upstream refuses with the same words, naming the field, value and what to do.
  CHECK(refusal(c).find("runs no FP8 for mixed_precision bf16") != std::string::npos);
  // Its reason is the mixed_precision quirk's why and reference, word for word.
  const auto quirk = std::find_if(c.quirks.begin(), c.quirks.end(),
                                  [](const Quirk& q) { return q.field == "mixed_precision"; });
  REQUIRE(quirk != c.quirks.end());
  CHECK(refusal(c) == c.runner + " runs no FP8 for mixed_precision bf16 (" + quirk->why + "; " +
                          quirk->reference + ")");
  CHECK(refusal(c) == "accelerate + Transformer Engine runs no FP8 for mixed_precision bf16 "
                      "(accelerate launch exports fp8_config only when mixed_precision is fp8; "
                      "te-accelerate.md §1.7)");
  try {
    recipe_to_run(c, RunsAs::upstream, {"bf16.yaml", 0});
    FAIL("no error");
  } catch (const RecipeError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.field() == "mixed_precision");
    CHECK(e.value() == "bf16");
    CHECK(message.rfind("bf16.yaml: mixed_precision: accelerate + Transformer Engine runs no "
                        "FP8",
                        0) == 0);
    CHECK(message.find("--baseline-only --baseline-precision bf16") != std::string::npos);
    CHECK(message.find("--as asked") != std::string::npos);
  }
  // mixed_precision "no" trains in fp32: the suggested baseline follows.
  const Compatibility none = compatibility(parse_accelerate_config_text(
      "mixed_precision: 'no'\nfp8_config:\n  backend: TE\n", "no.yaml"));
  REQUIRE(none.trains_without_fp8);
  CHECK_THROWS_WITH(recipe_to_run(none, RunsAs::upstream, {"no.yaml", 0}),
                    Catch::Contains("--baseline-precision fp32"));
  CHECK(explain_text("mixed_precision: 'no'\nfp8_config:\n  backend: TE\n", "no.yaml")
            .find("the model in fp32 without FP8") != std::string::npos);
  // fp16: fp8lab has no fp16 baseline; bf16 is the closest.
  const Compatibility fp16 = compatibility(parse_accelerate_config_text(
      "mixed_precision: fp16\nfp8_config:\n  backend: TE\n", "fp16.yaml"));
  CHECK(no_fp8_baseline_command(fp16) ==
        "fp8lab run --workload W --baseline-only --baseline-precision bf16");
  CHECK_THROWS_WITH(recipe_to_run(fp16, RunsAs::upstream, {"fp16.yaml", 0}),
                    Catch::Contains("--baseline-precision bf16"));
  // mixed_precision fp8 trains FP8 as before.
  CHECK_FALSE(compatibility(parse_accelerate_config_text(
                                "mixed_precision: fp8\nfp8_config:\n  backend: TE\n", "fp8.yaml"))
                  .trains_without_fp8);
}
