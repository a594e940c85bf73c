// `fp8lab sweep --slurm` refuses bad values with exit 2 naming the option, and a --out this machine
// cannot create before the sweep is read or sbatch is looked up; --slurm-script-only writes the
// script and submits nothing. No Slurm needed (each case is one short fp8lab process).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli.hpp"

namespace fp8lab::experiments {

TEST_CASE("fp8lab sweep --slurm: bad values exit 2 naming the option, before anything is submitted",
          "[slurm]") {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() /
                   ("fp8lab-slurm-options-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto sweep = (dir / "sweep.yaml").string();
  std::ofstream(sweep) << "workloads: [mlp]\nparameters:\n  margin: {values: [0, 1]}\n";
  std::ofstream(dir / "a-file") << "not a directory\n";
  auto out = (dir / "out").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--out", out, "--slurm", "--time", "1h"}, "--time: '1h': expected minutes"},
      {{"--out", out, "--slurm", "--partition", "a;b"}, "--partition: 'a;b': expected"},
      {{"--out", out, "--slurm", "--array-parallel", "0"}, "--array-parallel"},
      {{"--out", out, "--slurm", "--shards", "0"}, "--shards"},
      {{"--out", out, "--slurm", "--shards", "3"}, "--shards 3: the sweep has 2 distinct runs"},
      {{"--out", out, "--shards", "2"}, "--shards requires --slurm"},
      {{"--out", out, "--slurm", "--shard", "0/2"}, "excludes"},
      {{"--out", (dir / "my out").string(), "--slurm"}, "a #SBATCH line cannot hold"},
      // This machine cannot create it: stopped before the sweep is read or sbatch is looked up.
      {{"--out", (dir / "a-file" / "out").string(), "--slurm"}, "/a-file/out: cannot create"},
  };
  int i = 0;
  for (const auto& [options, message] : cases) {
    std::vector<std::string> argv = {FP8LAB_EXECUTABLE, "sweep", sweep};
    argv.insert(argv.end(), options.begin(), options.end());
    const auto log = dir / ("case-" + std::to_string(i++) + ".log");
    const int status = testing::run_to_end(argv, log);
    const auto text = testing::read_text(log);
    INFO(options.back() << ": " << text);
    CHECK(status == 2);
    CHECK_THAT(text, Catch::Contains(message));
    CHECK_THAT(text, !Catch::Contains("submitted"));
  }
  CHECK(!fs::exists(dir / "my out"));
  // --slurm-script-only writes the script and submits nothing.
  out = (dir / "script-only").string();
  const auto log = dir / "script-only.log";
  REQUIRE(testing::run_to_end({FP8LAB_EXECUTABLE, "sweep", sweep, "--out", out, "--slurm",
                               "--slurm-script-only", "--steps", "2"},
                              log) == 0);
  const auto text = testing::read_text(log);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("wrote " + out + "/slurm/sweep.sbatch (2 array tasks"));
  CHECK_THAT(text, Catch::Contains(" report " + out));
  CHECK_THAT(text, !Catch::Contains("submitted"));
  CHECK_THAT(testing::read_text(fs::path(out) / "slurm" / "sweep.sbatch"),
             Catch::Contains("--resume --steps 2 --baseline-precision fp32 --backend sim\n"));
  CHECK(fs::exists(fs::path(out) / "sweep.json"));
  fs::remove_all(dir);
}

}  // namespace fp8lab::experiments
