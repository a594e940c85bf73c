// No silent truncation (issue 19, item 2): an integer the user writes is run as written or refused
// with exit 2 naming the range; before, --set margin=4294967296 trained bit-identically to margin 0
// under a run id of its own, and amax_history_len=1000000000 ended in std::bad_alloc (exit 1).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/sweep/parallelism.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/refusals.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::check_refused;
using testing::read_text;
using testing::Refused;
using testing::run_to_end;

}  // namespace

TEST_CASE("Integers out of range are refused where they are read, naming the range",
          "[hardening][ranges]") {
  const testing::Scratch dir("ranges");
  const auto out = dir / "out";
  const auto sweep = (dir / "sweep.yaml").string();
  std::ofstream(sweep) << "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                          "parameters:\n  margin: {values: [0, 4294967296]}\n";
  const auto recipe = (dir / "recipe.yaml").string();
  std::ofstream(recipe) << "scaling: delayed\namax_history_len: 1000000000\n";
  const auto accelerate = (dir / "accelerate.yaml").string();
  std::ofstream(accelerate) << "mixed_precision: fp8\nfp8_config:\n  backend: TE\n"
                               "  margin: 9223372036854775807\n";
  const std::string margin_range = "an integer from 0 to 149 (TE computes fp8_max * 2^-margin";
  const std::vector<Refused> cases = {
      {{"run", "--workload", "mlp", "--set", "margin=4294967296", "--out", out.string()},
       {"margin: out of range, got '4294967296'", margin_range}},
      {{"run", "--workload", "mlp", "--set", "margin=9223372036854775807", "--out", out.string()},
       {"margin: out of range, got '9223372036854775807'", margin_range}},
      {{"sweep", sweep, "--out", out.string(), "--steps", "2"},
       {sweep + ":5: parameters.margin.values[1]: out of range, got '4294967296'", margin_range}},
      {{"run", "--workload", "mlp", "--recipe", recipe, "--out", out.string()},
       {recipe + ":2: amax_history_len: out of range, got '1000000000'",
        "an integer from 1 to 1048576 (memory estimate: ", "12 MiB per Linear"}},
      {{"explain", accelerate},
       {accelerate + ":4: fp8_config.margin: out of range, got '9223372036854775807'",
        margin_range}},
      {{"sweep", sweep, "--out", out.string(), "--jobs", "4294967297"},
       {"--jobs", "'4294967297'", "a whole number from 1 to 4096"}},
  };
  check_refused(FP8LAB_EXECUTABLE, cases, dir, out / "runs");

  SECTION("ACCELERATE_FP8_MARGIN=4294967296") {
    const auto log = dir / "env.log";
    ::setenv("ACCELERATE_FP8_MARGIN", "4294967296", 1);
    const int code = run_to_end({FP8LAB_EXECUTABLE, "explain", "--env"}, log);
    ::unsetenv("ACCELERATE_FP8_MARGIN");
    CHECK(code == 2);
    CHECK_THAT(read_text(log), Catch::Contains("environment: ACCELERATE_FP8_MARGIN: out of range, "
                                               "got '4294967296'; accepted: " +
                                               margin_range));
  }
}

TEST_CASE("--jobs above the core count says so", "[hardening][ranges]") {
  const testing::Scratch dir("jobs");
  std::ofstream(dir / "sweep.yaml") << "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                                       "parameters:\n  margin: {values: [0, 1]}\n";
  const int cores = available_cores();  // as the sweep counts them (nproc)
  const auto jobs = std::to_string(cores + 1);
  const auto log = dir / "dry.log";
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--dry-run",
                    "--jobs", jobs},
                   log) == 0);
  CHECK_THAT(read_text(log), Catch::Contains("--jobs " + jobs + " is above the " +
                                             std::to_string(cores) + " cores of this machine"));
  const auto quiet = dir / "quiet.log";
  CHECK(run_to_end(
            {FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--dry-run", "--jobs", "1"},
            quiet) == 0);
  CHECK_THAT(read_text(quiet), !Catch::Contains("cores of this machine"));
}

}  // namespace fp8lab::experiments
