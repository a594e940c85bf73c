// Issue 21, threads per run: how a sweep spreads its runs over the cores (runs at once x threads
// per run; experiments/sweep/parallelism.hpp), and the --threads range of fp8lab run and sweep.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/linear/cuda_backend.hpp"
#include "experiments/sweep/parallelism.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_to_end;

struct Case {
  int cores;
  std::size_t runs;
  int jobs, threads;  // given; 0: chosen
  Parallelism expected;
};

TEST_CASE("the sweep chooses runs at once x threads from the cores and the runs left",
          "[threads]") {
  const std::vector<Case> cases = {
      {2, 25, 0, 0, {2, 1}},  // more runs than cores: a run per core
      {2, 1, 0, 0, {1, 2}},   // one run left: it gets both cores
      {16, 5, 0, 0, {5, 3}},  // 5 runs on 16 cores: 3 threads each (15 cores)
      {16, 100, 0, 0, {16, 1}},
      {1, 7, 0, 0, {1, 1}},
      {8, 0, 0, 0, {1, 8}},   // nothing to run: any valid plan
      {2, 25, 1, 0, {1, 2}},  // --jobs 1: the other core becomes a thread
      {2, 25, 4, 0, {4, 1}},  // --jobs above the cores: kept, 1 thread
      {8, 2, 4, 0, {4, 4}},   // --jobs 4 but 2 runs: 2 at once, 4 threads each
      {8, 25, 0, 2, {4, 2}},  // --threads 2: as many runs as fit
      {2, 25, 0, 4, {1, 4}},  // --threads above the cores: one run
      {8, 3, 0, 2, {3, 2}},   // --threads 2, 3 runs
      {2, 25, 3, 3, {3, 3}},  // both given: as given
      {512, 1, 0, 0, {1, kMaxRunThreads}},
  };
  for (const auto& c : cases) {
    INFO("cores " << c.cores << ", runs " << c.runs << ", --jobs " << c.jobs << ", --threads "
                  << c.threads);
    const auto p = choose_parallelism(c.cores, c.runs, c.jobs, c.threads);
    CHECK(p.jobs == c.expected.jobs);
    CHECK(p.threads == c.expected.threads);
  }
  CHECK(available_cores() >= 1);
  CHECK(describe_parallelism({2, 1}, 2, 25, "runs", false, false) ==
        "25 runs on 2 cores: 2 at a time x 1 thread each (chosen from the cores and the runs; "
        "--jobs and --threads override)");
  CHECK(describe_parallelism({1, 2}, 2, 1, "baselines", true, false) ==
        "1 baseline on 2 cores: 1 at a time x 2 threads each (--jobs as given, threads chosen; "
        "--threads overrides)");
}

TEST_CASE("--threads out of range is refused with exit 2, naming the flag and the range",
          "[threads]") {
  const testing::Scratch dir("threads");
  const auto sweep = (dir / "sweep.yaml").string();
  std::ofstream(sweep) << "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                          "parameters:\n  margin: {values: [0, 1]}\n";
  const auto out = (dir / "out").string();
  const std::vector<std::vector<std::string>> refused = {
      {"run", "--workload", "mlp", "--set", "margin=0", "--out", out, "--threads", "0"},
      {"run", "--workload", "mlp", "--set", "margin=0", "--out", out, "--threads", "257"},
      {"run", "--workload", "mlp", "--set", "margin=0", "--out", out, "--threads", "two"},
      {"sweep", sweep, "--out", out, "--threads", "0"},
      {"sweep", sweep, "--out", out, "--threads", "-1"},
      {"sweep", sweep, "--out", out, "--threads", "4294967298"},
  };
  for (const auto& arguments : refused) {
    std::vector<std::string> argv = {FP8LAB_EXECUTABLE};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    const auto log = dir / "refused.log";
    fs::remove(log);
    INFO(arguments[0] << " --threads " << arguments.back());
    CHECK(run_to_end(argv, log) == 2);
    const auto text = read_text(log);
    CHECK_THAT(text, Catch::Contains("--threads"));
    CHECK_THAT(text, Catch::Contains("'" + arguments.back() + "'"));
    CHECK_THAT(text, Catch::Contains("from 1 to 256"));
  }
  CHECK_FALSE(fs::exists(dir / "out" / "runs"));  // nothing ran
}

}  // namespace
}  // namespace fp8lab::experiments
