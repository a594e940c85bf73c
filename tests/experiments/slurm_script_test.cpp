// The sbatch script of `fp8lab sweep --slurm` (experiments/sweep/slurm_script.hpp), as text: the
// #SBATCH lines, then one command that runs the shard of $SLURM_ARRAY_TASK_ID with --resume, and
// the checks that refuse a setting sbatch would misread. No Slurm needed (the slurm-labelled tests
// run the script on a real one).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "experiments/sweep/slurm_script.hpp"

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
  CHECK_THAT(text,
             Catch::Contains("/opt/fp8lab/build/experiments/fp8lab report /shared/u/formats"));
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
  for (const char* good :
       {"30", "30:00", "2:00:00", "1-12", "1-12:30", "1-12:30:00", "0", "UNLIMITED"}) {
    INFO(good);
    CHECK(slurm_time_problem(good).empty());
  }
  for (const char* bad :
       {"", "1h", "1:2:3:4", "-5", "1-", "1-2:3:4:5", ":30", "30:", "1.5", "2 hours"}) {
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

}  // namespace fp8lab::experiments
