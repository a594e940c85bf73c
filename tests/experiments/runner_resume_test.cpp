// Kill a sweep mid-run, rerun it with --resume: no finished run is lost (every distinct run ends
// with one record and the layer statistics sidecar it names) and none is repeated (records and
// sidecars written before the kill are the same files, byte for byte, and their runs started
// exactly once according to their logs). Runs the real
// `fp8lab sweep` executable in child processes on a small gpt-tiny sweep. A sweep of the recipes
// that draw random numbers (NVFP4 te with stochastic rounding and RHT, MXFP4 with
// mx_stochastic_rounding and mx_rht, a schedule whose first stage is NVFP4 with SR), killed with
// its runs part way and resumed, gives the uninterrupted sweep's record bits: --resume runs a
// killed run again from step 0 in a new process, whose backend makes each Linear's state afresh
// (ordinal, SR stream count and RHT draw index from 0, sim_backend.cpp), as the first attempt did.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "experiments/results/results_store.hpp"
#include "experiments/sweep/child_process.hpp"
#include "recipes/schedule.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::run_to_end;

// The sidecar a run's record names (docs/results-schema.md), or "" when it names none.
fs::path sidecar_of(const ResultsDirectory& results, const std::string& id) {
  const auto record = testing::read_json(results.run_record_path(id));
  const auto& relative = record["layer_stats_sidecar"];
  return relative.is_string() ? results.root() / relative.get<std::string>() : fs::path();
}

}  // namespace

TEST_CASE("A sweep killed mid-run resumes without losing or repeating a finished run",
          "[runner][resume]") {
  const testing::Scratch dir("resume");
  // 6 distinct runs of gpt-tiny.
  std::ofstream(dir / "sweep.yaml") << "method: grid\nworkloads: [gpt-tiny]\nseeds: [0]\n"
                                       "parameters:\n  fp8_format: {values: [HYBRID, E4M3, E5M2]}\n"
                                       "  margin: {values: [0, 1]}\n";
  const auto out = dir / "out";
  const std::vector<std::string> sweep = {FP8LAB_EXECUTABLE,
                                          "sweep",
                                          (dir / "sweep.yaml").string(),
                                          "--out",
                                          out.string(),
                                          "--jobs",
                                          "2",
                                          "--steps",
                                          "40"};
  const ResultsDirectory results(out);

  // First attempt: killed (SIGKILL, no chance to clean up) once two FP8 runs are recorded.
  const pid_t pid = start_child(sweep, dir / "first.log");
  std::size_t recorded = 0;
  testing::eventually(
      [&] {
        recorded = results.recorded_run_ids().size();
        return recorded >= 3;  // the baseline and two runs
      },
      std::chrono::minutes(5));
  ::kill(pid, SIGKILL);
  testing::wait_exit(pid);
  REQUIRE(recorded >= 3);
  std::map<std::string, std::pair<std::string, fs::file_time_type>> before, sidecars_before;
  for (const auto& id : results.recorded_run_ids()) {
    before[id] = {read_text(results.run_record_path(id)),
                  fs::last_write_time(results.run_record_path(id))};
    if (const auto sidecar = sidecar_of(results, id); !sidecar.empty()) {
      sidecars_before[id] = {read_text(sidecar), fs::last_write_time(sidecar)};
    }
  }
  INFO("recorded before the kill: " << before.size());
  REQUIRE(before.size() < 7);  // killed mid-sweep: something is left to do

  // Without --resume the directory is refused; with it the sweep completes.
  CHECK(run_to_end(sweep, dir / "refused.log") == 2);
  CHECK_THAT(read_text(dir / "refused.log"), Catch::Contains("pass --resume"));
  REQUIRE(run_to_end(testing::plus(sweep, {"--resume"}), dir / "second.log") == 0);

  const auto after = results.recorded_run_ids();
  CHECK(after.size() == 7);  // 6 runs + the baseline
  for (const auto& [id, record] : before) {
    INFO("run " << id);
    CHECK(read_text(results.run_record_path(id)) == record.first);
    CHECK(fs::last_write_time(results.run_record_path(id)) == record.second);
    if (id.rfind("baseline-", 0) != 0) {
      CHECK(testing::count_of(read_text(out / "logs" / (id + ".log")), "started") == 1);
      // Written before its record: an FP8 run recorded before the kill has its sidecar, untouched.
      REQUIRE(sidecars_before.count(id) == 1);
      CHECK(read_text(sidecar_of(results, id)) == sidecars_before[id].first);
      CHECK(fs::last_write_time(sidecar_of(results, id)) == sidecars_before[id].second);
    }
  }
  for (const auto& id : after) {
    const auto text = read_text(results.run_record_path(id));
    INFO(id << ": " << text.substr(0, 300));
    CHECK(text.find("\"status\":\"finished\"") != std::string::npos);
    if (id.rfind("baseline-", 0) != 0) CHECK(fs::is_regular_file(sidecar_of(results, id)));
  }
  CHECK(fs::exists(out / "report.html"));
}

// gpt-tiny at d_model 64 (every dgrad K a multiple of the RHT's 64), its head (vocabulary 96) in
// high precision, the GEMMs fp32_seq (the block-scaled model is too slow for a test). Three FP8
// runs at once: MXFP4 with SR and RHT for the whole run; NVFP4 te with SR and RHT until step 60,
// then high precision; NVFP4 te with SR until step 10, then MXFP4 with SR and RHT (fresh states
// at the switch: the draws of Linear states made mid-run).
const char* const kStochasticSweep =
    "method: grid\nworkloads: [{gpt-tiny: {d_model: 64}}]\nseeds: [0]\nnull_runs: false\n"
    "base: {keep_high_precision.layers: [head], mx_scale_mode: floor, gemm.fprop: fp32_seq,\n"
    "       gemm.dgrad: fp32_seq, gemm.wgrad: fp32_seq}\n"
    "parameters:\n"
    "  scaling: {value: mxfp4}\n"
    "  mx_stochastic_rounding: {value: true}\n"
    "  mx_rht: {value: true}\n"
    "schedules:\n"
    "  - schedule: [{until_step: 60, recipe: {scaling: nvfp4, nvfp4_mode: te,\n"
    "                nvfp4_stochastic_rounding: true, nvfp4_rht: true}},\n"
    "               {recipe: high_precision}]\n"
    "  - schedule: [{until_step: 10, recipe: {scaling: nvfp4, nvfp4_mode: te,\n"
    "                nvfp4_stochastic_rounding: true}},\n"
    "               {recipe: {scaling: mxfp4, mx_stochastic_rounding: true, mx_rht: true}}]\n";
constexpr int kStochasticSteps = 160;

TEST_CASE("A sweep of stochastic recipes killed mid-run resumes to the uninterrupted run's bits",
          "[runner][resume]") {
  const testing::Scratch dir("resume-stochastic");
  std::ofstream(dir / "sweep.yaml") << kStochasticSweep;
  // The FP8 runs' ids (with --steps N an id ends in -stepsN) and, for the scheduled ones, the
  // log line of their switch.
  std::map<std::string, std::string> switch_line;  // id -> "" for the unscheduled run
  for (const auto& run : recipes::expand(recipes::read_sweep((dir / "sweep.yaml").string())).runs) {
    const auto id = run.id + "-steps" + std::to_string(kStochasticSteps);
    const auto& later = run.recipe.schedule;  // the stages after the first
    switch_line[id] =
        later.empty()
            ? ""
            : "schedule: step " +
                  std::to_string(recipes::stage_start_step(later.front().start, kStochasticSteps)) +
                  ": stage 1";
  }
  REQUIRE(switch_line.size() == 3);
  const auto sweep = [&](const fs::path& out) {
    return std::vector<std::string>{FP8LAB_EXECUTABLE,
                                    "sweep",
                                    (dir / "sweep.yaml").string(),
                                    "--out",
                                    out.string(),
                                    "--jobs",
                                    "3",
                                    "--steps",
                                    std::to_string(kStochasticSteps)};
  };

  // Uninterrupted.
  REQUIRE(run_to_end(sweep(dir / "a"), dir / "a.log") == 0);
  const ResultsDirectory a(dir / "a");
  std::map<std::string, nlohmann::json> uninterrupted;
  for (const auto& [id, line] : switch_line) {
    uninterrupted[id] = testing::read_json(a.run_record_path(id));
    INFO(id << ": " << uninterrupted[id].dump().substr(0, 600));
    REQUIRE(uninterrupted[id].at("status") == "finished");
    const auto label = uninterrupted[id].at("recipe_label").get<std::string>();
    CHECK_THAT(label, Catch::Contains(" sr"));  // each draws stochastic-rounding uniforms
  }

  // Killed (SIGKILL) once both scheduled runs have switched, before any FP8 run's record.
  const auto b_out = dir / "b";
  const ResultsDirectory b(b_out);
  const pid_t pid = start_child(sweep(b_out), dir / "b-first.log");
  const bool switched = testing::eventually(
      [&] {
        for (const auto& [id, line] : switch_line) {
          const auto log = b_out / "logs" / (id + ".log");
          if (!line.empty() &&
              (!fs::exists(log) || read_text(log).find(line) == std::string::npos)) {
            return false;
          }
        }
        return true;
      },
      std::chrono::minutes(5));
  ::kill(pid, SIGKILL);
  testing::wait_exit(pid);
  REQUIRE(switched);
  for (const auto& [id, line] : switch_line) {
    INFO(id);
    REQUIRE(!fs::exists(b.run_record_path(id)));  // killed mid-run
  }
  REQUIRE(run_to_end(testing::plus(sweep(b_out), {"--resume"}), dir / "b-second.log") == 0);
  for (const auto& [id, record] : uninterrupted) {
    const auto resumed = testing::read_json(b.run_record_path(id));
    CHECK(testing::count_of(read_text(b_out / "logs" / (id + ".log")), "started") == 2);
    for (const char* key : {"status", "train", "eval", "layers", "schedule", "schedule_switches",
                            "fp8_gemms", "final"}) {
      INFO(id << " " << key);
      if (!record.contains(key)) {
        CHECK(!resumed.contains(key));
      } else if (std::string(key) == "final") {
        // final holds the losses and divergences; its timings are not bits of the run.
        for (const auto& [k, v] : record.at(key).items()) {
          if (k.find("seconds") == std::string::npos) CHECK(resumed.at(key).at(k) == v);
        }
      } else {
        CHECK(resumed.at(key) == record.at(key));
      }
    }
  }
}

}  // namespace fp8lab::experiments
