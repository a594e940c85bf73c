// Precision schedules through the real `fp8lab` command (recipes/schedule.hpp,
// experiments/run/schedule_run.hpp) on gpt-tiny: a `schedules:` arm switches at its step
// (its record's plans before and after, schedule_switches, and its losses equal to the
// unscheduled first stage's up to the switch and no further); a sweep killed after the switch and
// resumed gives the uninterrupted run's record bits; the same for stages that end on a signal
// (the underflow fraction; the gradient-to-noise ratio, each measurement equal to the probes'
// exact recompute of the unscheduled run); the dry run and `fp8lab explain` show the schedule;
// bad entries exit 2 naming the file, the field and what is accepted.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/results/probe_sidecar.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/sweep/child_process.hpp"
#include "recipes/lowering.hpp"
#include "recipes/role_rules.hpp"
#include "recipes/schedule.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::run_to_end;

const char* const kSweep =
    "method: grid\nworkloads: [gpt-tiny]\nseeds: [0]\n"
    // fp32_seq: the block-scaled GEMM model (NVFP4's default) is too slow for a test.
    "base: {gemm.fprop: fp32_seq, gemm.dgrad: fp32_seq, gemm.wgrad: fp32_seq}\n"
    "parameters:\n  scaling: {value: nvfp4}\n"
    "schedules:\n"
    "  - schedule: [{until_step: 20, recipe: {scaling: nvfp4}}, {recipe: high_precision}]\n";

// Long enough that a kill after the switch at step 20 lands before the run's record.
constexpr int kSteps = 600;

// The ids of the scheduled run and of the unscheduled nvfp4 run, from the sweep's expansion
// (with --steps N a run's id ends in -stepsN).
std::pair<std::string, std::string> run_ids(const fs::path& sweep_file, int steps = kSteps) {
  const auto expansion = recipes::expand(recipes::read_sweep(sweep_file.string()));
  std::string scheduled, plain;
  for (const auto& run : expansion.runs) {
    (run.recipe.schedule.empty() ? plain : scheduled) = run.id + "-steps" + std::to_string(steps);
  }
  return {scheduled, plain};
}

std::vector<double> losses(const nlohmann::json& record) {
  std::vector<double> out;
  for (const auto& row : record.at("train")) out.push_back(row.at("loss").get<double>());
  return out;
}

// The probes' exact_on_run whole-model gradient-to-noise ratio of a run, per probe step, from its
// sidecar in `out`.
std::map<std::int64_t, double> whole_model_ratios(const fs::path& out,
                                                  const nlohmann::json& record) {
  std::map<std::int64_t, double> ratio;
  for (const auto& row : read_probes(out / record.at("probe_sidecar").get<std::string>())) {
    if (row.direction == kExactOnRun && row.tensor == kWholeModel)
      ratio[row.step] = row.chmiel_ratio;
  }
  return ratio;
}

// `fp8lab sweep FILE --out OUT --jobs 1 --steps STEPS`.
std::vector<std::string> sweep_command(const fs::path& file, const fs::path& out,
                                       int steps = kSteps) {
  return {FP8LAB_EXECUTABLE,    "sweep",  file.string(), "--out",
          out.string(),         "--jobs", "1",           "--steps",
          std::to_string(steps)};
}

// A grad_noise_below sweep `dir/sweep.yaml` and the same workload probed every measurement
// (`dir/probed.yaml`), each run to its end into dir/a and dir/p: the scheduled run's record, the
// unscheduled run's, and the probed twin's whole-model ratio per probe step (its exact recompute).
struct SignalRuns {
  nlohmann::json record, plain;
  std::map<std::int64_t, double> probe_ratio;
  std::vector<double> probed_loss;
};
SignalRuns run_signal_sweeps(const fs::path& dir, const std::string& scheduled_id,
                             const std::string& plain_id, int steps) {
  REQUIRE(run_to_end(sweep_command(dir / "sweep.yaml", dir / "a", steps), dir / "a.log") == 0);
  REQUIRE(run_to_end(sweep_command(dir / "probed.yaml", dir / "p", steps), dir / "p.log") == 0);
  const ResultsDirectory a(dir / "a"), p(dir / "p");
  const auto probed = testing::read_json(p.run_record_path(plain_id));
  SignalRuns runs{testing::read_json(a.run_record_path(scheduled_id)),
                  testing::read_json(a.run_record_path(plain_id)),
                  whole_model_ratios(dir / "p", probed), losses(probed)};
  REQUIRE(runs.record.at("status") == "finished");
  return runs;
}

// The scheduled run's steps [0, at) are the unscheduled run's, bit for bit; step `at` (the first
// of the next stage) differs.
void check_same_until_switch(const std::vector<double>& scheduled_loss,
                             const std::vector<double>& plain_loss, std::int64_t at) {
  for (std::int64_t s = 0; s < at; ++s) {
    INFO("step " << s);
    CHECK(scheduled_loss[static_cast<std::size_t>(s)] == plain_loss[static_cast<std::size_t>(s)]);
  }
  CHECK(scheduled_loss[static_cast<std::size_t>(at)] != plain_loss[static_cast<std::size_t>(at)]);
}

// The sweep `sweep(out)` killed (SIGKILL) once run `scheduled_id`'s log says it switched to stage 1
// at step `at`, before its record; resumed: the record's bits are the uninterrupted `record`'s.
template <typename Sweep>
void check_resumed_after_switch(const fs::path& dir, const Sweep& sweep,
                                const std::string& scheduled_id, std::int64_t at,
                                const nlohmann::json& record) {
  const auto b_out = dir / "b";
  const ResultsDirectory b(b_out);
  const pid_t pid = start_child(sweep(b_out), dir / "b-first.log");
  const auto log = b_out / "logs" / (scheduled_id + ".log");
  const std::string line = fmt::format("schedule: step {}: stage 1", at);
  const bool switched = testing::eventually(
      [&] { return fs::exists(log) && read_text(log).find(line) != std::string::npos; },
      std::chrono::minutes(5));
  ::kill(pid, SIGKILL);
  testing::wait_exit(pid);
  REQUIRE(switched);
  REQUIRE(!fs::exists(b.run_record_path(scheduled_id)));
  REQUIRE(run_to_end(testing::plus(sweep(b_out), {"--resume"}), dir / "b-second.log") == 0);
  const auto resumed = testing::read_json(b.run_record_path(scheduled_id));
  for (const char* key : {"status", "train", "eval", "schedule", "schedule_switches"}) {
    INFO(key);
    CHECK(resumed.at(key) == record.at(key));
  }
}

}  // namespace

TEST_CASE("A schedule arm switches at its step and resumes to the uninterrupted run's bits",
          "[runner][schedule]") {
  const testing::Scratch dir("schedule");
  std::ofstream(dir / "sweep.yaml") << kSweep;
  const auto [scheduled_id, plain_id] = run_ids(dir / "sweep.yaml");
  REQUIRE(!scheduled_id.empty());
  REQUIRE(!plain_id.empty());
  const auto sweep = [&](const fs::path& out) { return sweep_command(dir / "sweep.yaml", out); };

  // The dry run names the arm and its stages.
  REQUIRE(run_to_end(testing::plus(sweep(dir / "dry"), {"--dry-run"}), dir / "dry.log") == 0);
  const auto dry = read_text(dir / "dry.log");
  CHECK_THAT(dry, Catch::Contains("schedule: nvfp4 until step 20, then high_precision"));

  // Uninterrupted.
  REQUIRE(run_to_end(sweep(dir / "a"), dir / "a.log") == 0);
  const ResultsDirectory a(dir / "a");
  const auto record = testing::read_json(a.run_record_path(scheduled_id));
  const auto plain = testing::read_json(a.run_record_path(plain_id));
  INFO(record.dump().substr(0, 2000));
  REQUIRE(record.at("status") == "finished");

  // The switch, in the typed record.
  const RunRecord typed = run_record_from_json(record);
  REQUIRE(typed.schedule_switches.has_value());
  REQUIRE(typed.schedule_switches->size() == 1);
  CHECK(typed.schedule_switches->front().step == 20);
  CHECK(typed.schedule_switches->front().stage == 1);
  CHECK(typed.schedule_switches->front().recipe_label.value_or("") == "high_precision");
  CHECK(typed.schedule_switches->front().recipe_canonical.is_null());
  CHECK(!run_record_from_json(plain).schedule_switches.present());

  // The plans before and after, and what the Linears ran at each stage's first step.
  const auto& stages = record.at("schedule").at("stages");
  REQUIRE(stages.size() == 2);
  CHECK(stages[0].at("from_step") == 0);
  CHECK(stages[0].at("until_step") == 20);
  CHECK(stages[1].at("from_step") == 20);
  CHECK(stages[1].at("until_step") == kSteps);
  for (const char* gemm : {"fprop", "dgrad", "wgrad"}) {
    for (const auto& [operand, plan] : stages[0].at("plans").at(gemm).items()) {
      INFO(gemm << " " << operand);
      CHECK(plan.get<std::string>().rfind("nvfp4 e2m1", 0) == 0);
      CHECK(stages[1].at("plans").at(gemm).at(operand) == "high_precision");
    }
  }
  // In recipes::plan_text's words, as explain and the lowering golden tables write a plan.
  for (const auto& run : recipes::expand(recipes::read_sweep((dir / "sweep.yaml").string())).runs) {
    if (run.recipe.schedule.empty()) continue;
    const auto first = recipes::schedule_stages(run.recipe).front().recipe;
    CHECK(stages[0].at("plans").at("fprop").at("input") ==
          recipes::plan_text(
              recipes::plan(*first, sim::scaling::Operand::kInput, sim::scaling::Gemm::kFprop)));
    CHECK(stages[0].at("plans").at("wgrad").at("grad_output") ==
          recipes::plan_text(recipes::plan(*first, sim::scaling::Operand::kGradOutput,
                                           sim::scaling::Gemm::kWgrad)));
  }
  REQUIRE(!stages[0].at("fp8_gemms").empty());
  for (const auto& [layer, gemms] : stages[0].at("fp8_gemms").items()) {
    INFO(layer);
    CHECK(gemms.size() == 3);
    CHECK(stages[1].at("fp8_gemms").at(layer).empty());
  }

  // Steps 0-19 are the unscheduled NVFP4 run's, bit for bit; the switch changes what follows.
  const auto scheduled_loss = losses(record), plain_loss = losses(plain);
  REQUIRE(scheduled_loss.size() == static_cast<std::size_t>(kSteps));
  REQUIRE(plain_loss.size() == static_cast<std::size_t>(kSteps));
  for (std::size_t s = 0; s < 20; ++s) {
    INFO("step " << s);
    CHECK(scheduled_loss[s] == plain_loss[s]);
  }
  bool differs = false;
  for (std::size_t s = 20; s < scheduled_loss.size(); ++s)
    differs = differs || scheduled_loss[s] != plain_loss[s];
  CHECK(differs);

  // Killed (SIGKILL) after the switch, before the run's record; then --resume.
  const auto b_out = dir / "b";
  const ResultsDirectory b(b_out);
  const pid_t pid = start_child(sweep(b_out), dir / "b-first.log");
  const auto log = b_out / "logs" / (scheduled_id + ".log");
  const bool switched = testing::eventually(
      [&] {
        return fs::exists(log) &&
               read_text(log).find("schedule: step 20: stage 1") != std::string::npos;
      },
      std::chrono::minutes(5));
  ::kill(pid, SIGKILL);
  testing::wait_exit(pid);
  REQUIRE(switched);
  REQUIRE(!fs::exists(b.run_record_path(scheduled_id)));  // killed mid-run, after the switch
  REQUIRE(run_to_end(testing::plus(sweep(b_out), {"--resume"}), dir / "b-second.log") == 0);
  const auto resumed = testing::read_json(b.run_record_path(scheduled_id));
  for (const char* key : {"status", "train", "eval", "schedule", "schedule_switches", "final"}) {
    INFO(key);
    if (std::string(key) == "final") {
      // final holds the losses and divergences; its timings (if any) are not bits of the run.
      for (const auto& [k, v] : record.at(key).items()) {
        if (k.find("seconds") == std::string::npos) CHECK(resumed.at(key).at(k) == v);
      }
    } else {
      CHECK(resumed.at(key) == record.at(key));
    }
  }
  CHECK(losses(resumed) == scheduled_loss);
}

// A stage that ends on a signal (until_signal): the gpt-tiny NVFP4 run's pooled underflow
// fraction, read back from the run's own sidecar (layer_stats_every 1: its `trained` rows, which
// pool the same counts as the `layers` rows the run watches).
const char* const kSignalSweep =
    "method: grid\nworkloads: [gpt-tiny]\nseeds: [0]\nlayer_stats_every: 1\n"
    "base: {gemm.fprop: fp32_seq, gemm.dgrad: fp32_seq, gemm.wgrad: fp32_seq}\n"
    "parameters:\n  scaling: {value: nvfp4}\n"
    "schedules:\n"
    "  - schedule: [{until_signal: {underflow_above: SIGNAL_ABOVE}, recipe: {scaling: nvfp4}}, "
    "{recipe: high_precision}]\n";
// gpt-tiny NVFP4 at 600 steps: the fraction is 0.080 at steps 0-1, falls to 0.065, and first
// exceeds 0.085 at step 25 (0.088); so the run switches at step 26.
constexpr double kSignalAbove = 0.085;

TEST_CASE("A signal stage switches the step after its underflow crosses, and resumes to the bits",
          "[runner][schedule]") {
  const testing::Scratch dir("schedule-signal");
  std::string text = kSignalSweep;
  text.replace(text.find("SIGNAL_ABOVE"), 12, fmt::format("{}", kSignalAbove));
  std::ofstream(dir / "sweep.yaml") << text;
  const auto [scheduled_id, plain_id] = run_ids(dir / "sweep.yaml");
  REQUIRE(!scheduled_id.empty());
  const auto sweep = [&](const fs::path& out) { return sweep_command(dir / "sweep.yaml", out); };
  REQUIRE(run_to_end(sweep(dir / "a"), dir / "a.log") == 0);
  const ResultsDirectory a(dir / "a");
  const auto record = testing::read_json(a.run_record_path(scheduled_id));
  const auto plain = testing::read_json(a.run_record_path(plain_id));
  REQUIRE(record.at("status") == "finished");

  // The run's own underflow fraction per step, from its sidecar's trained rows.
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> counts;  // underflowed, count
  for (const auto& row :
       read_layer_stats(dir / "a" / record.at("layer_stats_sidecar").get<std::string>())) {
    if (row.recipe != kTrainedRecipe) continue;
    counts[row.step].first += row.underflowed;
    counts[row.step].second += row.count;
  }
  const auto fraction = [&](std::int64_t step) {
    const auto& [under, count] = counts.at(step);
    return static_cast<double>(under) / static_cast<double>(count);
  };

  // One switch, at the step after the first whose fraction exceeds the threshold.
  const auto& switches = record.at("schedule_switches");
  REQUIRE(switches.size() == 1);
  const auto at = switches[0].at("step").get<std::int64_t>();
  INFO("switch at step " << at);
  REQUIRE(at >= 2);  // the threshold is chosen so that the first stage runs a few steps
  for (std::int64_t s = 0; s + 1 < at; ++s) {
    INFO("step " << s);
    CHECK(fraction(s) <= kSignalAbove);
  }
  CHECK(fraction(at - 1) > kSignalAbove);
  const auto& signal = switches[0].at("signal");
  CHECK(signal.at("underflow_fraction").get<double>() == fraction(at - 1));
  CHECK(signal.at("above").get<double>() == kSignalAbove);
  CHECK(signal.at("measured_at_step") == at - 1);
  CHECK(switches[0].at("recipe_label") == "high_precision");
  const auto& stages = record.at("schedule").at("stages");
  CHECK(stages[0].at("until_step") == at);
  CHECK(stages[1].at("from_step") == at);
  CHECK(stages[1].at("until") == fmt::format("underflow above {}", kSignalAbove));
  // After the switch no Linear quantizes: no trained rows.
  CHECK(counts.rbegin()->first == at - 1);

  // Measuring every step for the signal changes no bit: the NVFP4 run's losses up to the switch.
  const auto scheduled_loss = losses(record), plain_loss = losses(plain);
  REQUIRE(scheduled_loss.size() == plain_loss.size());
  check_same_until_switch(scheduled_loss, plain_loss, at);

  check_resumed_after_switch(dir, sweep, scheduled_id, at, record);
}

// A stage that ends on the gradient-to-noise ratio (until_signal: {grad_noise_below: R, every:
// N}): the ratios the run measured are the probes' exact_on_run whole-model chmiel_ratio of the
// unscheduled NVFP4 run at the same steps (the same trajectory up to the switch), read from a
// second sweep that probes that run.
const char* const kGradNoiseSweep =
    "method: grid\nworkloads: [gpt-tiny]\nseeds: [0]\n"
    "base: {gemm.fprop: fp32_seq, gemm.dgrad: fp32_seq, gemm.wgrad: fp32_seq}\n"
    "parameters:\n  scaling: {value: nvfp4}\n";
constexpr std::int64_t kGradNoiseEvery = 10;
// gpt-tiny NVFP4 at 600 steps: the probes' whole-model ratio is 5.62 at step 0, 2.63 at step
// 10, 1.7356 at step 20 and 1.41 at step 30; below Chmiel et al.'s sqrt(3) (1.732 here) first
// at step 30, so the run switches at step 31 (step 20 passes by 0.004).
constexpr double kGradNoiseBelow = 1.732;

TEST_CASE("A grad_noise_below stage switches after the first measured step below R, and resumes",
          "[runner][schedule]") {
  const testing::Scratch dir("schedule-grad-noise");
  std::ofstream(dir / "sweep.yaml")
      << kGradNoiseSweep
      << fmt::format("schedules:\n  - schedule: [{{until_signal: {{grad_noise_below: {}, every: "
                     "{}}}, recipe: {{scaling: nvfp4}}}}, {{recipe: high_precision}}]\n",
                     kGradNoiseBelow, kGradNoiseEvery);
  std::ofstream(dir / "probed.yaml")
      << kGradNoiseSweep << fmt::format("probe_every: {}\n", kGradNoiseEvery);
  const auto [scheduled_id, plain_id] = run_ids(dir / "sweep.yaml");
  REQUIRE(!scheduled_id.empty());
  const auto sweep = [&](const fs::path& out) { return sweep_command(dir / "sweep.yaml", out); };

  // The dry run names the signal.
  REQUIRE(run_to_end(testing::plus(sweep(dir / "dry"), {"--dry-run"}), dir / "dry.log") == 0);
  CHECK_THAT(read_text(dir / "dry.log"),
             Catch::Contains(fmt::format("nvfp4 until grad/noise below {} every {} steps, then "
                                         "high_precision",
                                         kGradNoiseBelow, kGradNoiseEvery)));

  const auto [record, plain, probe_ratio, probed_loss] =
      run_signal_sweeps(dir, scheduled_id, plain_id, kSteps);
  INFO(record.at("schedule").dump());
  REQUIRE(!probe_ratio.empty());

  // One switch, at the step after the first measured step whose ratio is below R.
  const auto& switches = record.at("schedule_switches");
  REQUIRE(switches.size() == 1);
  const auto at = switches[0].at("step").get<std::int64_t>();
  INFO("switch at step " << at);
  const auto measured = at - 1;
  CHECK(measured % kGradNoiseEvery == 0);
  REQUIRE(measured >= 2 * kGradNoiseEvery);  // R is chosen so that a few measurements pass
  const auto& measurements = record.at("schedule").at("stages")[0].at("signal_measurements");
  REQUIRE(measurements.size() == static_cast<std::size_t>(measured / kGradNoiseEvery + 1));
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const auto step = measurements[i].at("step").get<std::int64_t>();
    const auto ratio = measurements[i].at("grad_noise_ratio").get<double>();
    INFO("measured step " << step);
    CHECK(step == static_cast<std::int64_t>(i) * kGradNoiseEvery);
    // The same number as the probe's exact recompute of the unscheduled run's step.
    REQUIRE(probe_ratio.count(step) == 1);
    CHECK(ratio == probe_ratio.at(step));
    if (step < measured) CHECK(ratio >= kGradNoiseBelow);
  }
  CHECK(measurements.back().at("grad_noise_ratio").get<double>() < kGradNoiseBelow);
  const auto& signal = switches[0].at("signal");
  CHECK(signal.at("grad_noise_ratio") == measurements.back().at("grad_noise_ratio"));
  CHECK(signal.at("below").get<double>() == kGradNoiseBelow);
  CHECK(signal.at("every") == kGradNoiseEvery);
  CHECK(signal.at("measured_at_step") == measured);
  CHECK(switches[0].at("recipe_label") == "high_precision");
  CHECK(record.at("schedule").at("stages")[1].at("until") ==
        fmt::format("grad/noise below {} every {} steps", kGradNoiseBelow, kGradNoiseEvery));

  // The recompute changes no bit: the unscheduled run's losses up to the switch (and the probed
  // run's, whose probes are the same recompute, all the way).
  const auto scheduled_loss = losses(record), plain_loss = losses(plain);
  REQUIRE(scheduled_loss.size() == plain_loss.size());
  check_same_until_switch(scheduled_loss, plain_loss, at);
  CHECK(probed_loss == plain_loss);

  check_resumed_after_switch(dir, sweep, scheduled_id, at, record);
}

// consecutive: K: the stage ends after the first measured step that ends K measured steps in a
// row below R. The expected switch is worked out here from the unscheduled run's ratios (the
// probes' exact recompute, as above); R and K are chosen so that a measured step below R comes
// first alone (K = 1 would end the stage there) and the K in a row come later. gpt-tiny NVFP4 at
// 60 steps, measured on every step: 1.815 at step 20, then 1.563, 1.593, 2.087, 0.993, 1.439,
// 1.475 at steps 21-26; below sqrt(3) (1.732) first at step 21, but the third in a row only at step
// 26 (step 23 starts the count again), so the run switches at step 27 (K = 1: at step 22).
constexpr int kInARowSteps = 60;
constexpr std::int64_t kInARowEvery = 1;
constexpr double kInARowBelow = 1.732;
constexpr std::int64_t kInARow = 3;

TEST_CASE("A grad_noise_below stage with consecutive: K waits for K measurements in a row below R",
          "[runner][schedule]") {
  const testing::Scratch dir("schedule-in-a-row");
  std::ofstream(dir / "sweep.yaml")
      << kGradNoiseSweep
      << fmt::format("schedules:\n  - schedule: [{{until_signal: {{grad_noise_below: {}, every: "
                     "{}, consecutive: {}}}, recipe: {{scaling: nvfp4}}}}, {{recipe: "
                     "high_precision}}]\n",
                     kInARowBelow, kInARowEvery, kInARow);
  std::ofstream(dir / "probed.yaml")
      << kGradNoiseSweep << fmt::format("probe_every: {}\n", kInARowEvery);
  const auto [scheduled_id, plain_id] = run_ids(dir / "sweep.yaml", kInARowSteps);
  REQUIRE(!scheduled_id.empty());
  // ratio: the measured steps in order with the unscheduled run's ratio at each.
  const auto [record, plain, ratio, probed_loss] =
      run_signal_sweeps(dir, scheduled_id, plain_id, kInARowSteps);
  INFO(record.at("schedule").dump());
  // Where K = 1 would switch (the first measured step below R) and where K does.
  std::int64_t first_below = -1, kth_in_a_row = -1, in_a_row = 0;
  for (const auto& [step, r] : ratio) {
    if (step % kInARowEvery != 0) continue;
    in_a_row = r < kInARowBelow ? in_a_row + 1 : 0;
    if (in_a_row == 1 && first_below < 0) first_below = step;
    if (in_a_row == kInARow) {
      kth_in_a_row = step;
      break;
    }
  }
  INFO("first below R at step " << first_below << ", K in a row at step " << kth_in_a_row);
  REQUIRE(first_below >= 0);
  REQUIRE(kth_in_a_row > first_below + (kInARow - 1) * kInARowEvery);  // a reset between them
  REQUIRE(kth_in_a_row + 1 < kInARowSteps);

  const auto& switches = record.at("schedule_switches");
  REQUIRE(switches.size() == 1);
  CHECK(switches[0].at("step") == kth_in_a_row + 1);
  const auto& signal = switches[0].at("signal");
  CHECK(signal.at("measured_at_step") == kth_in_a_row);
  CHECK(signal.at("consecutive") == kInARow);
  CHECK(signal.at("every") == kInARowEvery);
  CHECK(signal.at("grad_noise_ratio").get<double>() == ratio.at(kth_in_a_row));
  // Every measurement up to the switch, each the probes' number for that step.
  const auto& measurements = record.at("schedule").at("stages")[0].at("signal_measurements");
  REQUIRE(measurements.size() == static_cast<std::size_t>(kth_in_a_row / kInARowEvery + 1));
  for (const auto& m : measurements) {
    const auto step = m.at("step").get<std::int64_t>();
    INFO("measured step " << step);
    CHECK(m.at("grad_noise_ratio").get<double>() == ratio.at(step));
  }
  CHECK(record.at("schedule").at("stages")[1].at("until") ==
        fmt::format("grad/noise below {} every {} steps, {} measurements in a row", kInARowBelow,
                    kInARowEvery, kInARow));
  check_same_until_switch(losses(record), losses(plain), kth_in_a_row + 1);
}

TEST_CASE("fp8lab explain shows a recipe file's schedule", "[runner][schedule]") {
  const testing::Scratch dir("schedule-explain");
  std::ofstream(dir / "recipe.yaml")
      << "schedule:\n  - {until: 0.82, recipe: {scaling: nvfp4}}\n  - {recipe: {scaling: mxfp8}}\n";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "explain", (dir / "recipe.yaml").string()},
                     dir / "explain.log") == 0);
  const auto text = read_text(dir / "explain.log");
  CHECK_THAT(text, Catch::Contains("schedule: 2 stages"));
  CHECK_THAT(text, Catch::Contains("stage 0: from step 0 to 0.82 of the steps: nvfp4"));
  CHECK_THAT(text, Catch::Contains("stage 1: from 0.82 of the steps to the end: scaling=mxfp8"));

  // A signal stage's end, in words.
  std::ofstream(dir / "signal.yaml")
      << "schedule:\n  - {until_signal: {grad_noise_below: 1.732, every: 5}, recipe: {scaling: "
         "nvfp4}}\n  - {recipe: high_precision}\n";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "explain", (dir / "signal.yaml").string()},
                     dir / "signal.log") == 0);
  CHECK_THAT(read_text(dir / "signal.log"),
             Catch::Contains("stage 0: from step 0 to the first step whose whole-model "
                             "gradient-to-noise ratio ||g|| / ||g_q - g|| (measured on the "
                             "stage's first step and every 5 after it) is below 1.732: nvfp4"));
}

TEST_CASE("Bad schedule entries exit 2 naming the file, the field and what is accepted",
          "[runner][schedule]") {
  const testing::Scratch dir("schedule-bad");
  struct Case {
    const char* schedule;
    const char* field;
    const char* says;
  };
  const Case cases[] = {
      {"[{until: 1.5, recipe: {scaling: nvfp4}}, {recipe: high_precision}]",
       "schedules[0].schedule[0].until", "a fraction in (0, 1)"},
      {"[{untill: 0.5, recipe: {scaling: nvfp4}}, {recipe: high_precision}]",
       "schedules[0].schedule[0].untill", "did you mean 'until'"},
      {"[{until: 0.5, recipe: {scaling: nvfp4}}, {recipe: hi_precision}]",
       "schedules[0].schedule[1].recipe", "a mapping of recipe fields or high_precision"},
      {"[{recipe: {scaling: nvfp4}}, {recipe: high_precision}]", "schedules[0].schedule[0].until",
       "is missing"},
      {"[{until: 0.5, recipe: {scaling: nvfp4}}, {until: 0.9, recipe: high_precision}]",
       "schedules[0].schedule[1]", "no until / until_step"},
      {"[{until: 0.5, recipe: {scaling: nvfp4}}, {until: 0.4, recipe: {scaling: mxfp8}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[1].until", "values that increase"},
      {"[{until: 0.5, recipe: {scaling: nvfp4}}, {until_step: 90, recipe: {scaling: mxfp8}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[1].until_step", "mixes until, until_step and until_signal"},
      {"[{until_signal: {underflow_above: 0.1}, recipe: {scaling: nvfp4}}, {until: 0.9, recipe: "
       "{scaling: mxfp8}}, {recipe: high_precision}]",
       "schedules[0].schedule[1].until", "mixes until, until_step and until_signal"},
      {"[{until_signal: {underflow_above: 1.5}, recipe: {scaling: nvfp4}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[0].until_signal.underflow_above", "a fraction in (0, 1)"},
      {"[{until_signal: {grad_noise_below: 0}, recipe: {scaling: nvfp4}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[0].until_signal.grad_noise_below", "out of range"},
      {"[{until_signal: {grad_noise_below: root3}, recipe: {scaling: nvfp4}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[0].until_signal.grad_noise_below", "expected a number"},
      {"[{until_signal: {grad_noise_below: 1.7, underflow_above: 0.1}, recipe: {scaling: nvfp4}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[0].until_signal", "gives two signals"},
      {"[{until_signal: {grad_noise_below: 1.7}, recipe: {scaling: nvfp4}}, "
       "{until_signal: {grad_noise_below: 1.7}, recipe: high_precision}, {recipe: {scaling: "
       "mxfp8}}]",
       "schedules[0].schedule[1].until_signal", "quantizes nothing"},
      {"[{until_signal: {grad_noise_below: 1.7, consecutive: 0}, recipe: {scaling: nvfp4}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[0].until_signal.consecutive", "measurements in a row"},
      {"[{until_signal: {grad_noise_bellow: 1.7}, recipe: {scaling: nvfp4}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[0].until_signal.grad_noise_bellow",
       "did you mean 'grad_noise_below'"},
      {"[{until_signal: 0.1, recipe: {scaling: nvfp4}}, {recipe: high_precision}]",
       "schedules[0].schedule[0].until_signal", "{underflow_above: F}"},
      {"[{until_signal: {underflow_above: 0.1}, recipe: {scaling: nvfp4}}, "
       "{until_signal: {underflow_above: 0.1}, recipe: high_precision}, {recipe: {scaling: "
       "mxfp8}}]",
       "schedules[0].schedule[1].until_signal", "quantizes nothing"},
      {"[{until: 0.5, recipe: {scaling: nvfp4}}, {recipe: {scaling: mxfp8, optimizer_states: "
       "{m: bf16, v: bf16}}}]",
       "schedules[0].schedule[1].recipe", "optimizer_states and master_weights must be the same"},
      {"[{until: 0.5, recipe: {scaling: delayed}}, {recipe: {scaling: delayed, margin: 1}}]",
       "schedules[0].schedule[1].recipe", "TE keeps that amax history"},
      {"[{until: 0.5, recipe: {scaling: nvfp4}}, {recipe: {scaling: tensorwise}}]",
       "schedules[0].schedule[1].recipe", "module_filter"},
      {"[{until: 0.5, recipe: high_precision}, {recipe: {scaling: nvfp4}}]",
       "schedules[0].schedule[0].recipe", "cannot be the first stage"},
      {"[{until: 0.5, recipe: {scaling: nvfp4, autoswitch: {enabled: true}}}, "
       "{recipe: high_precision}]",
       "schedules[0].schedule[0].recipe", "autoswitch"},
      {"[{recipe: {scaling: nvfp4}}]", "schedules[0].schedule", "at least two stages"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const auto file = dir / ("bad" + std::to_string(i++) + ".yaml");
    std::ofstream(file) << "workloads: [gpt-tiny]\nseeds: [0]\nschedules:\n  - schedule: "
                        << c.schedule << "\n";
    const auto log = dir / (file.stem().string() + ".log");
    INFO(c.schedule);
    CHECK(run_to_end({FP8LAB_EXECUTABLE, "sweep", file.string(), "--dry-run"}, log) == 2);
    const auto text = read_text(log);
    INFO(text);
    CHECK_THAT(text, Catch::Contains(file.string()));
    CHECK_THAT(text, Catch::Contains(c.field));
    CHECK_THAT(text, Catch::Contains(c.says));
  }
}

}  // namespace fp8lab::experiments
