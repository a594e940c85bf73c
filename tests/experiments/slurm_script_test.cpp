// The sbatch script of `fp8lab sweep --slurm` (experiments/runner/slurm_script.hpp), as text: the
// #SBATCH lines, then one command that runs the shard of $SLURM_ARRAY_TASK_ID with --resume, and
// the checks that refuse a setting sbatch would misread. No Slurm needed (the slurm-labelled tests
// run the script on a real one).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/runner/slurm_script.hpp"
#include "tests/support/read_text.hpp"
#include "tests/support/run_to_end.hpp"

namespace fp8lab::experiments {
namespace {

SlurmArray example_array() {
  SlurmArray array;
  array.sweep_name = "fp8 formats";
  array.executable = "/opt/fp8lab/build/experiments/fp8lab";
  array.sweep_file = "/home/u/sweeps/formats.yaml";
  array.output = "/shared/u/formats";
  array.shards = 4;
  array.sweep_options = {"--steps", "20", "--heatmap-axes", "fp8_format,margin"};
  return array;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("the script is #SBATCH lines, then one command running the task's shard with --resume",
          "[slurm]") {
  SlurmSettings settings;
  settings.partition = "gpu,cpu";
  settings.time = "2:00:00";
  settings.array_parallel = 2;
  const auto text = slurm_script(example_array(), settings);
  INFO(text);
  const auto lines = lines_of(text);
  REQUIRE(lines.size() > 3);
  CHECK(lines.front() == "#!/bin/bash");
  // Every line is a comment, an #SBATCH line, or the last one: the command.
  std::vector<std::string> sbatch;
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    INFO(lines[i]);
    REQUIRE(lines[i].rfind("#", 0) == 0);
    if (lines[i].rfind("#SBATCH ", 0) == 0) sbatch.push_back(lines[i].substr(8));
  }
  CHECK(sbatch == std::vector<std::string>{"--job-name=fp8lab-fp8_formats", "--array=0-3%2",
                                           "--output=/shared/u/formats/slurm/shard-%a.out",
                                           "--open-mode=append", "--chdir=/shared/u/formats",
                                           "--requeue", "--partition=gpu,cpu", "--time=2:00:00"});
  CHECK(lines.back() ==
        "exec /opt/fp8lab/build/experiments/fp8lab sweep /home/u/sweeps/formats.yaml --out "
        "/shared/u/formats --shard \"$SLURM_ARRAY_TASK_ID/4\" --resume --steps 20 "
        "--heatmap-axes fp8_format,margin");
  // The comment says how to rerun a shard and how to merge.
  CHECK_THAT(text, Catch::Contains("sbatch --array=K /shared/u/formats/slurm/sweep.sbatch"));
  CHECK_THAT(text, Catch::Contains("/opt/fp8lab/build/experiments/fp8lab report /shared/u/formats"));
}

TEST_CASE("settings not given leave their #SBATCH lines out", "[slurm]") {
  auto array = example_array();
  array.shards = 1;
  const auto text = slurm_script(array, {});
  CHECK_THAT(text, Catch::Contains("#SBATCH --array=0-0\n"));
  CHECK_THAT(text, !Catch::Contains("--partition"));
  CHECK_THAT(text, !Catch::Contains("--time"));
  CHECK_THAT(text, Catch::Contains("--shard \"$SLURM_ARRAY_TASK_ID/1\" --resume"));
}

TEST_CASE("paths and options are quoted for bash where they need it", "[slurm]") {
  CHECK(shell_quote("/a/b-c_d.e:f=g,h+i@j%k") == "/a/b-c_d.e:f=g,h+i@j%k");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$HOME") == "'$HOME'");
  CHECK(shell_quote("") == "''");
  auto array = example_array();
  array.sweep_file = "/home/u/my sweeps/a.yaml";
  array.executable = "/opt/fp8 lab/fp8lab";
  const auto text = slurm_script(array, {});
  CHECK_THAT(text, Catch::Contains("exec '/opt/fp8 lab/fp8lab' sweep '/home/u/my sweeps/a.yaml'"));
}

TEST_CASE("Slurm time limits: the forms sbatch accepts, and nothing else", "[slurm]") {
  for (const char* good : {"30", "30:00", "2:00:00", "1-12", "1-12:30", "1-12:30:00", "0",
                           "UNLIMITED"}) {
    INFO(good);
    CHECK(slurm_time_problem(good).empty());
  }
  for (const char* bad : {"", "1h", "1:2:3:4", "-5", "1-", "1-2:3:4:5", ":30", "30:", "1.5",
                          "2 hours"}) {
    INFO(bad);
    CHECK_THAT(slurm_time_problem(bad), Catch::Contains("expected minutes, minutes:seconds"));
  }
}

TEST_CASE("partitions and output directories a #SBATCH line cannot hold are refused, named",
          "[slurm]") {
  CHECK(slurm_partition_problem("gpu").empty());
  CHECK(slurm_partition_problem("gpu_a100,cpu-long.x").empty());
  for (const char* bad : {"", "gpu,", ",gpu", "gpu cpu", "gpu;rm", "a\nb"}) {
    INFO(bad);
    CHECK_THAT(slurm_partition_problem(bad), Catch::Contains("expected a partition name"));
  }
  CHECK(slurm_output_problem("/shared/u/out-1").empty());
  for (const char* bad : {"/shared/my out", "/shared/50%", "/shared/a\"b", "/shared/a'b"}) {
    INFO(bad);
    CHECK_THAT(slurm_output_problem(bad), Catch::Contains("cannot hold"));
  }

  auto array = example_array();
  SlurmSettings settings;
  settings.time = "1h";
  CHECK_THROWS_WITH(slurm_script(array, settings), Catch::StartsWith("--time '1h': expected"));
  settings = {};
  settings.partition = "a b";
  CHECK_THROWS_WITH(slurm_script(array, settings), Catch::StartsWith("--partition 'a b'"));
  array.output = "/shared/my out";
  CHECK_THROWS_WITH(slurm_script(array, {}), Catch::StartsWith("--out '/shared/my out' holds"));
  array = example_array();
  array.shards = 0;
  CHECK_THROWS_WITH(slurm_script(array, {}), Catch::StartsWith("--shards 0"));
}

TEST_CASE("fp8lab sweep --slurm: bad values exit 2 naming the option, before anything is submitted",
          "[slurm]") {
  namespace fs = std::filesystem;
  const auto dir =
      fs::temp_directory_path() / ("fp8lab-slurm-options-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto sweep = (dir / "sweep.yaml").string();
  std::ofstream(sweep) << "workloads: [mlp]\nparameters:\n  margin: {values: [0, 1]}\n";
  std::ofstream(dir / "a-file") << "not a directory\n";
  const auto out = (dir / "out").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--out", out, "--slurm", "--time", "1h"}, "--time '1h': expected minutes"},
      {{"--out", out, "--slurm", "--partition", "a;b"}, "--partition 'a;b': expected"},
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
