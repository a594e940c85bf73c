// Issue 43 item 3 at the recipes level: the optimizer_states and master_weights fields (read from
// files and sweeps, validated, canonical, explained, in the run id only when not fp32).
#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "recipes/canonical.hpp"
#include "recipes/error.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/recipe_text.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/recipe_text.hpp"

using namespace fp8lab::recipes;
using fp8lab::sim::optim::Expansion;
using fp8lab::sim::optim::MasterWeights;
using fp8lab::sim::optim::StateFormat;
using fp8lab::sim::optim::StateScaling;
using fp8lab::testing::message_of;

namespace {}  // namespace

TEST_CASE("optimizer_states: FP8-LM's and COAT's choices read from a file", "[optimizer]") {
  const Recipe fp8lm =
      parse_recipe_text("scaling: current\noptimizer_states: {m: fp8_e4m3, v: fp16}\n", "r.yaml");
  CHECK(fp8lm.optimizer_states.m == StateFormat::kE4M3);
  CHECK(fp8lm.optimizer_states.v == StateFormat::kFp16);
  CHECK(fp8lm.optimizer_states.scaling == StateScaling::kPerTensor);
  const Recipe coat = parse_recipe_text(
      "scaling: current\noptimizer_states: {m: FP8_E4M3, v: fp8_e4m3, scaling: per_block:128, "
      "expansion: coat}\nmaster_weights: bf16_sr\n",
      "r.yaml");
  CHECK(coat.optimizer_states.scaling == StateScaling::kPerBlock);
  CHECK(coat.optimizer_states.block == 128);
  CHECK(coat.optimizer_states.expansion == Expansion::kCoat);
  CHECK(coat.optimizer_states.master_weights == MasterWeights::kBf16Stochastic);
  const auto precision = optimizer_precision(coat.optimizer_states);
  CHECK(precision.m.expansion == Expansion::kCoat);
  CHECK(precision.v.block == 128);
  CHECK_THAT(canonical_string(coat),
             Catch::EndsWith(";optimizer_states=m=fp8_e4m3,v=fp8_e4m3,scaling=per_block:128,"
                             "expansion=coat,master_weights=bf16_sr"));
  CHECK_THAT(describe(coat), Catch::Contains("optimizer_states: m=fp8_e4m3"));
  // The file text a recipe writes reads back as the same recipe (recipe_file_text checks it).
  CHECK_THAT(recipe_file_text(coat), Catch::Contains("optimizer_states:\n  m: fp8_e4m3\n"));
  CHECK_THAT(recipe_file_text(coat), Catch::Contains("master_weights: bf16_sr\n"));
}

TEST_CASE("optimizer_states: fp32 given is today's recipe, canonical string and id",
          "[optimizer]") {
  const Recipe absent = parse_recipe_text("scaling: delayed\n", "r.yaml");
  const Recipe fp32 = parse_recipe_text(
      "scaling: delayed\noptimizer_states: {m: fp32, v: fp32}\nmaster_weights: fp32\n", "r.yaml");
  CHECK(absent == fp32);
  CHECK(canonical_string(absent) == canonical_string(fp32));
  CHECK(canonical_string(fp32).find("optimizer") == std::string::npos);
  CHECK(sweep_run_id(absent, "mlp", 0) == sweep_run_id(fp32, "mlp", 0));
  const Recipe bf16 =
      parse_recipe_text("scaling: delayed\noptimizer_states: {m: bf16}\n", "r.yaml");
  CHECK(sweep_run_id(bf16, "mlp", 0) != sweep_run_id(absent, "mlp", 0));
}

TEST_CASE("optimizer_states: bad values name the file, the field and what is accepted",
          "[optimizer]") {
  const std::pair<const char*, const char*> cases[] = {
      {"optimizer_states: {m: fp8}\n", "optimizer_states.m"},
      {"optimizer_states: {m: fp8}\n", "fp32, bf16, fp16, fp8_e4m3, fp8_e5m2"},
      {"optimizer_states: {m: fp8_e4m3, scaling: per_block:0}\n", "per_block:N"},
      {"optimizer_states: {m: fp8_e4m3, scaling: per_block}\n", "optimizer_states.scaling"},
      {"optimizer_states: {m: fp8_e4m3, scaling: blockwise}\n", "per_tensor"},
      {"optimizer_states: {m: fp8_e4m3, expansion: coat}\n", "needs per_block scaling"},
      {"optimizer_states: {m: fp8_e5m2, scaling: per_block:128, expansion: coat}\n",
       "E4M3 states only"},
      {"optimizer_states: {m: bf16, scaling: per_block:128}\n",
       "optimizer_states.scaling: applies to fp16 and fp8 states"},
      {"optimizer_states: {w: bf16}\n", "optimizer_states.w"},
      {"optimizer_states: bf16\n", "m, v, scaling, expansion"},
      {"master_weights: fp16\n", "fp32, bf16, bf16_sr"},
  };
  for (const auto& [text, says] : cases) {
    INFO(text);
    const std::string message = message_of(text);
    CHECK_THAT(message, Catch::Contains(says));
    CHECK_THAT(message, Catch::Contains("r.yaml"));
  }
}

TEST_CASE("optimizer_states: sweep keys, and canonical collapses unused scaling", "[optimizer]") {
  const SweepExpansion e = expand(parse_sweep_text(R"(
workloads: [mlp]
base: {scaling: current}
parameters:
  optimizer_states.m: {values: [fp32, bf16, fp8_e4m3]}
  optimizer_states.scaling: {values: [per_tensor, per_block:128]}
)",
                                                   "s.yaml"));
  CHECK(e.requested.size() == 6);
  // fp32 and bf16 moments take no scale: their two scalings are one run each.
  CHECK(e.runs.size() == 4);
  const auto c = canonicalize(
      parse_recipe_text("optimizer_states: {m: fp8_e4m3, scaling: per_block:32}\n", "r.yaml"));
  CHECK(c.recipe.optimizer_states.block == 32);
}

TEST_CASE("optimizer_states: the L6 sweeps expand to the arms they name", "[optimizer]") {
  const std::string dir = std::string(FP8LAB_SOURCE_DIR) + "/recipes/sweeps/literature/";
  const SweepExpansion grid = expand(read_sweep(dir + "L6-optimizer-states.yaml"));
  CHECK(grid.runs.size() == 4);
  for (const auto& run : grid.runs) {
    CHECK(run.recipe.keep_high_precision.layers == std::vector<std::string>{".*"});
  }
  const SweepExpansion coat = expand(read_sweep(dir + "L6-coat.yaml"));
  REQUIRE(coat.runs.size() == 2);
  CHECK(coat.runs[1].recipe.optimizer_states.expansion == Expansion::kCoat);
  CHECK(coat.runs[1].recipe.optimizer_states.block == 128);
  const SweepExpansion master = expand(read_sweep(dir + "L6-master-weights.yaml"));
  REQUIRE(master.runs.size() == 2);
  CHECK(master.runs[1].recipe.optimizer_states.master_weights == MasterWeights::kBf16Stochastic);
}
