// Issue 29: a sweep submitted with `fp8lab sweep --slurm` as a 2-task array job on a real
// (one-node) Slurm records what the same sweep records in one process: every record field equal
// except timings and the host, and the baseline archives equal byte for byte. Both shards need both
// baselines; each baseline runs once (the claims under the shared --out hold across array tasks),
// and `fp8lab report DIR` merges the shards' records.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/results/results_reader.hpp"
#include "tests/experiments/slurm_test_support.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_command;
using testing::run_to_end;

}  // namespace

TEST_CASE("a 2-shard array sweep on Slurm records what one process records", "[slurm]") {
  const auto dir = testing::mlp_sweep_directory("slurm-array");
  const auto sweep = (dir / "sweep.yaml").string();
  const auto on_slurm = dir / "slurm-out", here = dir / "one-process";

  const auto submit = testing::submit_two_shards(dir, on_slurm, 20);
  const auto& job = submit.job;
  CHECK_THAT(submit.output, Catch::Contains(" report " + on_slurm.string()));
  const auto script = read_text(on_slurm / "slurm" / "sweep.sbatch");
  CHECK_THAT(script, Catch::Contains("#SBATCH --array=0-1\n"));
  REQUIRE(testing::wait_for_job(job, dir / "squeue.log", std::chrono::minutes(4)));
  // Each task ran its shard to its end (the sweep's closing line is in the task's output).
  for (const char* task : {"0", "1"}) {
    const auto output = read_text(on_slurm / "slurm" / ("shard-" + std::string(task) + ".out"));
    INFO("array task " << task << ":\n" << output);
    CHECK_THAT(output, Catch::Contains("2 distinct runs in this shard"));
  }

  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "sweep", sweep, "--out", here.string(), "--steps", "20"},
                     dir / "one-process.log") == 0);
  const std::vector<std::string> timings_and_host = {"throughput", "started_at", "finished_at",
                                                     "host"};
  const auto expected = testing::records(here, timings_and_host);
  const auto got = testing::records(on_slurm, timings_and_host);
  REQUIRE(expected.size() == 6);  // 4 FP8 runs and 2 baselines
  CHECK(got.size() == expected.size());
  for (const auto& [id, record] : expected) {
    INFO("run " << id);
    REQUIRE(got.count(id) == 1);
    CHECK(record["status"] == "finished");
    // The diff names the differing fields when the check fails.
    CHECK(nlohmann::json::diff(record, got.at(id)).dump() == "[]");
    if (id.rfind("baseline-", 0) == 0) {
      // Both shards needed it; one task ran it, the other waited for its record.
      CHECK(testing::count_of(read_text(on_slurm / "logs" / (id + ".log")), ": started") == 1);
    }
  }
  for (const auto& entry : fs::directory_iterator(here / "baselines")) {
    INFO(entry.path());
    CHECK(read_text(entry.path()) == read_text(on_slurm / "baselines" / entry.path().filename()));
  }

  // The command the submission printed merges the shards.
  const auto merged = dir / "merged";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "report", on_slurm.string(), "--out", merged.string()},
                     dir / "report.log") == 0);
  CHECK(read_run_records(merged / "results.jsonl").size() == 6);
  fs::remove_all(dir);
}

}  // namespace fp8lab::experiments
