// Issue 29: an array task cancelled with scancel while it trains a run, then resubmitted as the
// script's comment says (sbatch --array=K DIR/slurm/sweep.sbatch), loses nothing and repeats
// nothing. The runs it was training leave no record (an error, not a result: --resume reruns
// them); the records written before the resubmission stay the same files, byte for byte; every run
// and baseline ends with one finished record, and only the cancelled runs started a second time.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "experiments/results/results_reader.hpp"
#include "experiments/results/results_store.hpp"
#include "tests/experiments/slurm_test_support.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/run_processes.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_command;

// The run id of an FP8 run that shard `shard` ("1/2") of the sweep into `out` trains now: a child
// with --run-id of the sweep process with those --out and --shard; "" when there is none.
std::string fp8_run_in_flight(const fs::path& out, const std::string& shard) {
  const auto all = testing::processes();
  for (const auto& sweep : all) {
    if (testing::option_value(sweep.arguments, "--out") != out.string() ||
        testing::option_value(sweep.arguments, "--shard") != shard) {
      continue;
    }
    for (const auto& run : all) {
      if (run.parent != sweep.pid) continue;
      if (const auto id = testing::option_value(run.arguments, "--run-id")) return *id;
    }
  }
  return {};
}

}  // namespace

TEST_CASE("an array task cancelled mid-run and resubmitted loses nothing and repeats nothing",
          "[slurm]") {
  const auto dir = testing::mlp_sweep_directory("slurm-cancel");
  const auto out = dir / "out";
  const ResultsDirectory results(out);

  const auto job = testing::submit_two_shards(dir, out, 1000).job;

  // Task 1 is cancelled while it trains one of its FP8 runs (its baselines are done by then).
  std::string cancelled_run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  for (int i = 1; cancelled_run.empty() && std::chrono::steady_clock::now() < deadline; ++i) {
    // In flight and training: its process exists and has printed its start (LibTorch's load
    // comes before it; a cancel in that second would kill a run that never started).
    cancelled_run = fp8_run_in_flight(out, "1/2");
    if (!cancelled_run.empty() &&
        testing::count_of(read_text(out / "logs" / (cancelled_run + ".log")), ": started") == 1) {
      break;
    }
    cancelled_run.clear();
    // Once a second: a job that ended before a run was seen ends the wait (and the test).
    if (i % 20 == 0 && testing::active_tasks(job, dir / "squeue.log").empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO("array task 1 before the cancel:\n" << read_text(out / "slurm" / "shard-1.out"));
  REQUIRE(!cancelled_run.empty());
  const auto scancel = run_command({"scancel", job + "_1"}, dir / "scancel.log");
  INFO(scancel.output);
  REQUIRE(scancel.status == 0);
  REQUIRE(testing::wait_for_job(job, dir / "squeue.log", std::chrono::minutes(4)));

  INFO("cancelled while training " << cancelled_run);
  const auto task1 = read_text(out / "slurm" / "shard-1.out");
  INFO("array task 1:\n" << task1);
  CHECK_THAT(task1, Catch::Contains("CANCELLED"));
  // The run that was killed is not a result: no record, no "failed" one either.
  CHECK(!fs::exists(results.run_record_path(cancelled_run)));
  const auto recorded = results.recorded_run_ids();
  REQUIRE(recorded.size() < 6);  // something is left to do
  // How often each run started before the resubmission: the runs task 1 was training when it was
  // cancelled started once and have no record.
  std::map<std::string, std::size_t> starts_before;
  for (const auto& entry : fs::directory_iterator(out / "logs")) {
    if (entry.path().extension() != ".log") continue;
    const auto id = entry.path().stem().string();
    starts_before[id] = testing::count_of(read_text(entry.path()), ": started");
    INFO(id);
    // At most once; a run the cancel killed before it printed its start has a log and no start.
    CHECK(starts_before[id] <= 1);
  }
  CHECK(starts_before[cancelled_run] == 1);
  std::map<std::string, std::pair<std::string, fs::file_time_type>> before;
  for (const auto& id : recorded) {
    const auto path = results.run_record_path(id);
    before[id] = {read_text(path), fs::last_write_time(path)};
    INFO(id << ": " << before[id].first.substr(0, 300));
    CHECK(before[id].first.find("\"status\":\"finished\"") != std::string::npos);
  }

  // Resubmitted as the script says; its --resume runs what is missing.
  const auto script = out / "slurm" / "sweep.sbatch";
  CHECK_THAT(read_text(script), Catch::Contains("sbatch --array=K " + script.string()));
  const auto again =
      run_command({"sbatch", "--parsable", "--array=1", script.string()}, dir / "sbatch.log");
  INFO(again.output);
  REQUIRE(again.status == 0);
  const auto second_job = again.output.substr(0, again.output.find_first_of(";\n"));
  REQUIRE(testing::wait_for_job(second_job, dir / "squeue.log", std::chrono::minutes(4)));
  INFO("array task 1, both attempts:\n" << read_text(out / "slurm" / "shard-1.out"));

  const auto after = results.recorded_run_ids();
  CHECK(after.size() == 6);  // 4 FP8 runs and 2 baselines
  for (const auto& id : after) {
    INFO("run " << id);
    const auto text = read_text(results.run_record_path(id));
    CHECK(text.find("\"status\":\"finished\"") != std::string::npos);
    // A run recorded before ran once; one cancelled mid-run ran once more, and only once.
    const auto starts = testing::count_of(read_text(out / "logs" / (id + ".log")), ": started");
    CHECK(starts == starts_before[id] + (before.count(id) == 1 ? 0u : 1u));
    if (before.count(id) == 1) {
      CHECK(text == before[id].first);
      CHECK(fs::last_write_time(results.run_record_path(id)) == before[id].second);
    }
  }

  const auto merged = dir / "merged";
  REQUIRE(testing::run_to_end({FP8LAB_EXECUTABLE, "report", out.string(), "--out", merged.string()},
                              dir / "report.log") == 0);
  CHECK(read_run_records(merged / "results.jsonl").size() == 6);
  fs::remove_all(dir);
}

}  // namespace fp8lab::experiments
