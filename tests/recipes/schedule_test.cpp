// Precision schedules in recipes/ (recipes/schedule.hpp): a recipe file's and a sweep's
// `schedule`, the canonical string and run id (unchanged without a schedule), the stages, the
// dry run's label, the grad_noise_below signal and its refusals, and L9's sweep file.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "recipes/canonical.hpp"
#include "recipes/error.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/schedule.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/recipe_text.hpp"

namespace fp8lab::recipes {

TEST_CASE("A recipe file's schedule reads into stages", "[recipes][schedule]") {
  const Recipe r =
      parse_recipe_text("nvfp4_2d: true\nschedule:\n  - {until: 0.82, recipe: {scaling: nvfp4}}\n"
                        "  - {recipe: high_precision}\n",
                        "r.yaml");
  CHECK(r.scaling == Scaling::nvfp4);
  CHECK(r.nvfp4_2d);  // the file's other fields are every stage's base
  REQUIRE(r.schedule.size() == 1);
  CHECK(r.schedule[0].start.is_fraction);
  CHECK(r.schedule[0].start.fraction == 0.82);
  CHECK(r.schedule[0].recipe == nullptr);
  CHECK(stage_start_step(r.schedule[0].start, 100) == 82);
  CHECK(stage_start_step(r.schedule[0].start, 60) == 49);  // llround(49.2)
  CHECK(schedule_label(r) == "nvfp4 until 0.82, then high_precision");
  const auto stages = schedule_stages(r);
  REQUIRE(stages.size() == 2);
  CHECK(stages[0].recipe->schedule.empty());
  CHECK(stages[0].recipe->scaling == Scaling::nvfp4);

  // The canonical string ends with the schedule; the first stage alone keeps its own string.
  Recipe first = r;
  first.schedule.clear();
  CHECK(canonical_string(r) == canonical_string(first) + ";schedule={from=0.82:high_precision}");
  CHECK(canonical_string(first).find("schedule") == std::string::npos);
  CHECK(run_id(r) != run_id(first));

  const Recipe steps = parse_recipe_text(
      "schedule:\n  - {until_step: 20, recipe: {scaling: nvfp4}}\n"
      "  - {until_step: 30, recipe: {scaling: mxfp8}}\n  - {recipe: high_precision}\n",
      "r.yaml");
  REQUIRE(steps.schedule.size() == 2);
  CHECK(!steps.schedule[0].start.is_fraction);
  CHECK(steps.schedule[0].start.step == 20);
  REQUIRE(steps.schedule[0].recipe != nullptr);
  CHECK(steps.schedule[0].recipe->scaling == Scaling::mxfp8);
  CHECK(steps.schedule[1].start.step == 30);
  CHECK(schedule_label(steps) ==
        "nvfp4 until step 20, then mxfp8 HYBRID until step 30, then high_precision");
  CHECK_THAT(describe(steps), Catch::Contains("stage 1: from step 20 to step 30: scaling=mxfp8"));
}

// A two-stage schedule whose nvfp4 stage ends on `signal` (an until_signal mapping).
namespace {
Recipe read_signal(const std::string& signal) {
  return parse_recipe_text("schedule:\n  - {until_signal: " + signal +
                               ", recipe: {scaling: nvfp4}}\n  - {recipe: high_precision}\n",
                           "r.yaml");
}
}  // namespace

TEST_CASE("A stage can end on the gradient-to-noise ratio", "[recipes][schedule]") {
  const Recipe r = read_signal("{grad_noise_below: 1.732}");
  REQUIRE(r.schedule.size() == 1);
  const ScheduleStart& start = r.schedule[0].start;
  CHECK(start.on_signal);
  CHECK(!start.is_fraction);
  CHECK(start.grad_noise_below == 1.732);
  CHECK(start.underflow_above == 0.0);
  CHECK(start.every == kDefaultGradNoiseEvery);
  CHECK(start.consecutive == 1);  // the first measurement below R ends the stage
  CHECK_THROWS_AS(stage_start_step(start, 100), std::logic_error);
  CHECK(schedule_label(r) ==
        "nvfp4 until grad/noise below 1.732 every 10 steps, then high_precision");
  CHECK_THAT(describe(r), Catch::Contains("stage 0: from step 0 to the first step whose "
                                          "whole-model gradient-to-noise ratio"));
  CHECK_THAT(describe(r), Catch::Contains("every 10 after it) is below 1.732"));
  Recipe first = r;
  first.schedule.clear();
  CHECK(canonical_string(r) ==
        canonical_string(first) + ";schedule={from=gnr<1.732every10:high_precision}");

  // every is part of the signal (it decides which steps are measured), so of the run id.
  const Recipe every5 = read_signal("{grad_noise_below: 1.732, every: 5}");
  CHECK(every5.schedule[0].start.every == 5);
  CHECK(run_id(every5) != run_id(r));
  CHECK(run_id(read_signal("{grad_noise_below: 1.732, every: 10}")) == run_id(r));
  CHECK(run_id(read_signal("{underflow_above: 0.5}")) !=
        run_id(read_signal("{grad_noise_below: 0.5}")));

  struct Bad {
    const char* signal;
    const char* says;
  };
  const Bad bad[] = {
      {"{grad_noise_below: 0}", "out of range"},
      {"{grad_noise_below: -1.7}", "out of range"},
      {"{grad_noise_below: .inf}", "wrong type"},
      {"{grad_noise_below: sqrt3}", "wrong type: expected a number"},
      {"{grad_noise_below: 1.7, every: 0}", "an integer >= 1"},
      {"{grad_noise_below: 1.7, every: 2.5}", "schedule[0].until_signal.every"},
      {"{grad_noise_below: 1.7, underflow_above: 0.1}", "gives two signals"},
      {"{underflow_above: 0.1, every: 5}", "is for grad_noise_below only"},
      {"{every: 5}", "names no signal"},
      {"{grad_noise_bellow: 1.7}", "did you mean 'grad_noise_below'"},
      {"{grad_noise_below: 1.7, consecutive: 0}", "measurements in a row"},
      {"{grad_noise_below: 1.7, consecutive: -2}", "out of range"},
      {"{grad_noise_below: 1.7, consecutive: 1.5}", "schedule[0].until_signal.consecutive"},
      {"{grad_noise_below: 1.7, consecutive: three}", "an integer >= 1"},
      {"{underflow_above: 0.1, consecutive: 2}", "until_signal.consecutive"},
      {"{underflow_above: 0.1, consecutive: 2}", "is for grad_noise_below only"},
      {"{grad_noise_below: 1.7, consecutiv: 2}", "did you mean 'consecutive'"},
  };
  for (const auto& b : bad) {
    INFO(b.signal);
    CHECK_THROWS_WITH(read_signal(b.signal), Catch::Contains(b.says) && Catch::Contains("r.yaml") &&
                                                 Catch::Contains("schedule[0].until_signal"));
  }
}

TEST_CASE("A grad_noise_below stage can wait for K measurements in a row below R",
          "[recipes][schedule]") {
  const Recipe r = read_signal("{grad_noise_below: 1.732, every: 5, consecutive: 3}");
  REQUIRE(r.schedule.size() == 1);
  CHECK(r.schedule[0].start.consecutive == 3);
  CHECK(r.schedule[0].start.every == 5);
  CHECK(r.schedule[0].start.grad_noise_below == 1.732);
  CHECK(read_signal("{consecutive: 2, grad_noise_below: 1.7}").schedule[0].start.consecutive == 2);
  CHECK(schedule_label(r) == "nvfp4 until grad/noise below 1.732 every 5 steps, 3 measurements in "
                             "a row, then high_precision");
  CHECK_THAT(describe(r), Catch::Contains("stage 0: from step 0 to the first step that ends 3 "
                                          "measured steps in a row whose whole-model "
                                          "gradient-to-noise ratio"));
  CHECK_THAT(describe(r), Catch::Contains("stage 1: from the step after the first step that ends 3 "
                                          "measured steps in a row"));
  Recipe first = r;
  first.schedule.clear();
  CHECK(canonical_string(r) ==
        canonical_string(first) + ";schedule={from=gnr<1.732every5consecutive3:high_precision}");

  // K decides when the stage ends, so it is part of the run id; K = 1 is the default, whose
  // canonical string and run id are those of a recipe written before consecutive existed.
  const Recipe once = read_signal("{grad_noise_below: 1.732, every: 5}");
  CHECK(run_id(r) != run_id(once));
  CHECK(run_id(read_signal("{grad_noise_below: 1.732, every: 5, consecutive: 2}")) != run_id(r));
  CHECK(read_signal("{grad_noise_below: 1.732, every: 5, consecutive: 1}") == once);
  CHECK(canonical_string(once) ==
        canonical_string(first) + ";schedule={from=gnr<1.732every5:high_precision}");

  // Chmiel et al.'s QAF stage in fp8lab's words (recipes/README.md): the same FP4 forward, the
  // backward unquantized.
  const Recipe qaf = parse_recipe_text(
      "schedule:\n  - {until_signal: {grad_noise_below: 1.732, consecutive: 3}, recipe: {scaling: "
      "nvfp4}}\n  - {recipe: {scaling: nvfp4, backward_override: high_precision}}\n",
      "r.yaml");
  REQUIRE(qaf.schedule.size() == 1);
  REQUIRE(qaf.schedule[0].recipe != nullptr);
  CHECK(qaf.schedule[0].recipe->scaling == Scaling::nvfp4);
  CHECK(qaf.schedule[0].recipe->backward_override == BackwardOverride::kHighPrecision);
}

TEST_CASE("A stage canonicalizes like a recipe and says which stage", "[recipes][schedule]") {
  const Recipe r = parse_recipe_text(
      "schedule:\n  - {until: 0.5, recipe: {scaling: nvfp4}}\n"
      "  - {recipe: {scaling: current, fp8_format: E4M3, override_linear_precision: [true, true, "
      "true]}}\n",
      "r.yaml");
  const Canonical c = canonicalize(r);
  REQUIRE(c.recipe.schedule.size() == 1);
  REQUIRE(c.recipe.schedule[0].recipe != nullptr);
  CHECK(!c.recipe.schedule[0].recipe->override_linear_precision.none());
  REQUIRE(!c.reasons.empty());
  CHECK(c.reasons.back().rfind("schedule stage 1: ", 0) == 0);
}

TEST_CASE("A sweep's schedules are arms beside the grid", "[recipes][schedule]") {
  const Sweep s =
      parse_sweep_text("workloads: [gpt-tiny]\nseeds: [0, 1]\nbase: {nvfp4_2d: true}\n"
                       "parameters:\n  scaling: {value: nvfp4}\n"
                       "schedules:\n  - schedule: [{until_step: 20, recipe: {scaling: nvfp4}}, "
                       "{recipe: high_precision}]\n",
                       "s.yaml");
  REQUIRE(s.schedules.size() == 1);
  CHECK(s.schedules[0].nvfp4_2d);
  const SweepExpansion e = expand(s);
  REQUIRE(e.runs.size() == 4);  // (nvfp4, scheduled) x 2 seeds
  int scheduled = 0;
  for (const auto& run : e.runs) scheduled += run.recipe.schedule.empty() ? 0 : 1;
  CHECK(scheduled == 2);
  bool labelled = false;
  for (const auto& request : e.requested) {
    if (request.recipe.schedule.empty()) continue;
    CHECK(request_label(s, request) == "schedule: nvfp4 until step 20, then high_precision");
    labelled = true;
  }
  CHECK(labelled);
  CHECK_THAT(format_dry_run(e), Catch::Contains("schedule: nvfp4 until step 20"));

  // With probes, or twice: refused.
  CHECK_THROWS_WITH(
      parse_sweep_text("workloads: [gpt-tiny]\nseeds: [0]\nprobes: [current]\nschedules:\n"
                       "  - schedule: [{until: 0.5, recipe: {scaling: nvfp4}}, "
                       "{recipe: high_precision}]\n",
                       "p.yaml"),
      Catch::Contains("p.yaml") && Catch::Contains("schedules") &&
          Catch::Contains("without probes"));
  CHECK_THROWS_WITH(parse_sweep_text("workloads: [gpt-tiny]\nseeds: [0]\nschedules:\n"
                                     "  - schedule: [{until: 0.5, recipe: {scaling: nvfp4}}, "
                                     "{recipe: high_precision}]\n"
                                     "  - schedule: [{until: 0.5, recipe: {scaling: nvfp4}}, "
                                     "{recipe: high_precision}]\n",
                                     "t.yaml"),
                    Catch::Contains("schedules[1]") && Catch::Contains("given twice"));
}

TEST_CASE("Stages share the run's optimizer_states and master_weights", "[recipes][schedule]") {
  using fp8lab::testing::message_of;
  // A later stage whose stored moments differ is refused, naming the stage and the fix.
  const std::string bad =
      message_of("schedule:\n  - {until: 0.5, recipe: {scaling: nvfp4}}\n"
                 "  - {recipe: {scaling: mxfp8, optimizer_states: {m: bf16, v: bf16}}}\n");
  CHECK_THAT(bad, Catch::Contains("schedule[1].recipe"));
  CHECK_THAT(bad, Catch::Contains("optimizer_states and master_weights must be the same"));
  CHECK_THAT(bad, Catch::Contains("set them in base"));
  CHECK_THAT(message_of("schedule:\n  - {until: 0.5, recipe: {scaling: nvfp4, master_weights: "
                        "bf16}}\n  - {recipe: {scaling: mxfp8}}\n"),
             Catch::Contains("must be the same"));
  // Set in the file's base, every stage has them; a high_precision stage keeps the run's AdamW.
  const Recipe r = parse_recipe_text(
      "optimizer_states: {m: bf16, v: bf16}\nschedule:\n  - {until: 0.5, recipe: {scaling: "
      "nvfp4}}\n  - {recipe: {scaling: mxfp8}}\n",
      "r.yaml");
  REQUIRE(r.schedule.size() == 1);
  REQUIRE(r.schedule[0].recipe != nullptr);
  CHECK(r.schedule[0].recipe->optimizer_states == r.optimizer_states);
  CHECK(r.optimizer_states.m == sim::optim::StateFormat::kBf16);
  CHECK(message_of("optimizer_states: {m: bf16, v: bf16}\nschedule:\n  - {until: 0.5, recipe: "
                   "{scaling: nvfp4}}\n  - {recipe: high_precision}\n") == "no error");
}

TEST_CASE("L9's sweep file expands to NVFP4 throughout and NVFP4 then fp32",
          "[recipes][schedule]") {
  const auto e =
      expand(read_sweep(FP8LAB_SOURCE_DIR "/recipes/sweeps/literature/L9-precision-switch.yaml"));
  REQUIRE(e.runs.size() == 6);
  for (const auto& run : e.runs) {
    CHECK(run.recipe.scaling == Scaling::nvfp4);
    CHECK(run.recipe.nvfp4_rht);
    if (run.recipe.schedule.empty()) continue;
    REQUIRE(run.recipe.schedule.size() == 1);
    CHECK(run.recipe.schedule[0].start.fraction == 0.82);
    CHECK(run.recipe.schedule[0].recipe == nullptr);
  }
}

TEST_CASE("L9's signal sweep file switches the same NVFP4 on the gradient-to-noise ratio",
          "[recipes][schedule]") {
  const auto e =
      expand(read_sweep(FP8LAB_SOURCE_DIR "/recipes/sweeps/literature/L9-signal-switch.yaml"));
  REQUIRE(e.runs.size() == 2);
  int scheduled = 0;
  for (const auto& run : e.runs) {
    CHECK(run.seed == 0);
    CHECK(run.recipe.scaling == Scaling::nvfp4);
    CHECK(run.recipe.nvfp4_2d);
    CHECK(run.recipe.nvfp4_rht);
    CHECK(run.recipe.nvfp4_stochastic_rounding);
    if (run.recipe.schedule.empty()) continue;
    ++scheduled;
    REQUIRE(run.recipe.schedule.size() == 1);
    CHECK(run.recipe.schedule[0].start.on_signal);
    CHECK(run.recipe.schedule[0].start.grad_noise_below == 1.732);
    CHECK(run.recipe.schedule[0].start.every == 10);
    CHECK(run.recipe.schedule[0].recipe == nullptr);
  }
  CHECK(scheduled == 1);
}

}  // namespace fp8lab::recipes
