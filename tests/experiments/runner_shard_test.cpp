// A sweep split with --shard i/n into two output directories, merged by `fp8lab report DIR DIR
// --out MERGED`: every distinct run is in exactly one shard, the baseline both shards ran is kept
// once, and summary.csv has one row per requested combination, each pointing at a recorded run.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/results/results_reader.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/sweep/child_process.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::run_to_end;

}  // namespace

TEST_CASE("Shards split the distinct runs and report merges them", "[runner][shard]") {
  const testing::Scratch dir("shards");
  // 8 requests, 6 distinct runs: amax_history_len 1 makes max equal most_recent.
  std::ofstream(dir / "sweep.yaml")
      << "method: grid\nworkloads: [gpt-tiny]\nseeds: [0]\nparameters:\n"
         "  amax_history_len: {values: [1, 16]}\n"
         "  amax_compute_algo: {values: [max, most_recent]}\n"
         "  margin: {values: [0, 1]}\n";
  std::set<std::string> ids[2];
  for (int shard = 0; shard < 2; ++shard) {
    const auto out = dir / ("shard" + std::to_string(shard));
    REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out",
                        out.string(), "--steps", "10", "--shard", std::to_string(shard) + "/2"},
                       dir / ("shard" + std::to_string(shard) + ".log")) == 0);
    for (const auto& id : ResultsDirectory(out).recorded_run_ids()) {
      if (id.rfind("baseline-", 0) != 0) ids[shard].insert(id);
    }
  }
  CHECK(ids[0].size() == 3);
  CHECK(ids[1].size() == 3);
  for (const auto& id : ids[0]) CHECK(ids[1].count(id) == 0);

  CHECK(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--shard", "2/2"},
                   dir / "bad-shard.log") == 2);
  CHECK_THAT(read_text(dir / "bad-shard.log"), Catch::Contains("0 <= i < n"));

  const auto merged = dir / "merged";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "report", (dir / "shard0").string(),
                      (dir / "shard1").string(), "--out", merged.string()},
                     dir / "report.log") == 0);
  const auto records = read_run_records(merged / "results.jsonl");
  CHECK(records.size() == 7);  // 6 runs + 1 baseline (each shard ran it)
  std::istringstream csv(read_text(merged / "summary.csv"));
  std::string line;
  std::getline(csv, line);  // header
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    INFO(line);
    CHECK(line.find(",finished,") != std::string::npos);
  }
  CHECK(rows == 8);
  CHECK(fs::exists(merged / "report.html"));
}

TEST_CASE("A results directory keeps one model device: CPU-trained runs never resume as GPU ones",
          "[runner][resume]") {
  const testing::Scratch dir("device");
  std::ofstream(dir / "sweep.yaml") << "workloads: [mlp]\nparameters:\n  margin: {value: 0}\n";
  const auto out = (dir / "out").string();
  const std::vector<std::string> sweep = {
      FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out", out, "--steps", "2"};
  REQUIRE(run_to_end(sweep, dir / "sim.log") == 0);
  CHECK_THAT(read_text(dir / "out" / "sweep.json"), Catch::Contains("\"model_device\": \"cpu\""));

  // --backend cuda trains on the GPU: refused here before anything runs, naming the field (the
  // runs would be filed under other ids, and the report would mix the two).
  auto cuda = sweep;
  cuda.insert(cuda.end(), {"--resume", "--backend", "cuda"});
  CHECK(run_to_end(cuda, dir / "cuda.log") != 0);
  CHECK_THAT(read_text(dir / "cuda.log"),
             Catch::Contains("another sweep configuration (model_device \"cpu\", now \"cuda\")"));

  // cuda-staged trains on the CPU, as does a sweep.json written before model_device existed.
  std::string json = read_text(dir / "out" / "sweep.json");
  const auto at = json.find("\"model_device\": \"cpu\",");
  REQUIRE(at != std::string::npos);
  json.erase(at, std::string("\"model_device\": \"cpu\",").size());
  std::ofstream(dir / "out" / "sweep.json") << json;
  auto resume = sweep;
  resume.push_back("--resume");
  CHECK(run_to_end(resume, dir / "resume.log") == 0);
  CHECK_THAT(read_text(dir / "resume.log"), !Catch::Contains("another sweep configuration"));
}

}  // namespace fp8lab::experiments
