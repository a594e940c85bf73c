// No silent truncation (issue 19, item 2): an integer the user writes is run as written or refused
// with exit 2 naming the range; before, --set margin=4294967296 trained bit-identically to margin 0
// under a run id of its own, and amax_history_len=1000000000 ended in std::bad_alloc (exit 1).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/runner/parallelism.hpp"
#include "tests/support/read_text.hpp"
#include "tests/support/run_to_end.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_to_end;

struct Refused {
  std::vector<std::string> arguments;  // after the executable
  std::vector<std::string> message;    // substrings the output must contain
};

void check_refused(const std::vector<Refused>& cases, const fs::path& dir, const fs::path& out) {
  int index = 0;
  for (const auto& bad : cases) {
    std::string command = "fp8lab";
    for (const auto& a : bad.arguments) command += " '" + a + "'";
    INFO(command);
    const auto log = dir / ("case" + std::to_string(index++) + ".log");
    std::vector<std::string> arguments = {FP8LAB_EXECUTABLE};
    arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
    CHECK(run_to_end(arguments, log) == 2);
    const auto text = read_text(log);
    INFO("output: " << text);
    for (const auto& part : bad.message) CHECK_THAT(text, Catch::Contains(part));
    CHECK_FALSE(fs::exists(out / "runs"));  // refused before anything ran
  }
}

}  // namespace

TEST_CASE("Integers out of range are refused where they are read, naming the range",
          "[hardening][ranges]") {
  const auto dir = fs::temp_directory_path() / ("fp8lab-ranges-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
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
  check_refused(cases, dir, out);

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
  fs::remove_all(dir);
}

TEST_CASE("--jobs above the core count says so", "[hardening][ranges]") {
  const auto dir = fs::temp_directory_path() / ("fp8lab-jobs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
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
  fs::remove_all(dir);
}

}  // namespace fp8lab::experiments
