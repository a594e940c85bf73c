// What the slurm tests share: Slurm's own commands (sbatch, squeue, scancel, found on PATH) and
// fp8lab run to their end with their output, a sweep submitted in two shards, the job id `fp8lab sweep --slurm` printed, and waiting
// until a job has left the queue. The cluster is scripts/slurm-up's (slurm_test_main.cpp).
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "experiments/sweep/child_process.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::testing {

struct CommandResult {
  int status = 0;
  std::string output;  // what this command appended to its log
};

// Runs `arguments` to its end (arguments[0] looked up on PATH when it holds no '/'), its output
// appended to `log`.
inline CommandResult run_command(std::vector<std::string> arguments,
                                 const std::filesystem::path& log) {
  if (arguments.at(0).find('/') == std::string::npos) {
    const auto program = experiments::find_on_path(arguments[0]);
    INFO(arguments[0] << " is not on PATH");
    REQUIRE(!program.empty());
    arguments[0] = program.string();
  }
  const auto before = read_text(log).size();
  CommandResult result;
  result.status = run_to_end(arguments, log);
  result.output = read_text(log).substr(before);
  return result;
}

// The job id in `fp8lab sweep --slurm`'s output ("submitted Slurm job 12: ..."), or "".
inline std::string submitted_job(const std::string& output) {
  const std::string prefix = "submitted Slurm job ";
  const auto at = output.find(prefix);
  if (at == std::string::npos) return {};
  const auto start = at + prefix.size();
  return output.substr(start, output.find_first_not_of("0123456789", start) - start);
}

// The tasks of job `id` that are still queued or running, as squeue lists them ("12_0 RUNNING"
// lines); "" once the job has left the queue (squeue lists only active tasks, and a job it has
// already forgotten is an "Invalid job id").
inline std::string active_tasks(const std::string& id, const std::filesystem::path& log) {
  for (;;) {
    const auto squeue = run_command({"squeue", "-h", "-j", id, "-o", "%i %T"}, log);
    if (squeue.status == 0) return squeue.output;
    if (squeue.output.find("Invalid job id") != std::string::npos) return {};
    std::this_thread::sleep_for(std::chrono::seconds(1));  // slurmctld busy: ask again
  }
}

// Waits until job `id` has left the queue; false when it is still there after `limit` (the test
// then fails showing the tasks, rather than waiting for CTest's timeout).
inline bool wait_for_job(const std::string& id, const std::filesystem::path& log,
                         std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (active_tasks(id, log).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}

// A two-seed, two-recipe mlp sweep: 4 distinct FP8 runs beside 2 baselines.
inline void write_mlp_sweep(const std::filesystem::path& file) {
  std::ofstream(file) << "method: grid\nworkloads: [mlp]\nseeds: [0, 1]\nparameters:\n"
                         "  fp8_format: {values: [HYBRID, E4M3]}\n";
}

// A new empty directory temp/fp8lab-NAME-PID holding write_mlp_sweep's file as sweep.yaml.
inline std::filesystem::path mlp_sweep_directory(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("fp8lab-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_mlp_sweep(dir / "sweep.yaml");
  return dir;
}

struct Submission {
  std::string output;  // fp8lab's, for the test's own checks
  std::string job;     // the array job's id
};

// `fp8lab sweep DIR/sweep.yaml --out OUT --steps STEPS --slurm --shards 2`, its output in
// DIR/submit.log; requires exit 0 and a printed job id (the output is shown where not).
inline Submission submit_two_shards(const std::filesystem::path& dir,
                                    const std::filesystem::path& out, int steps) {
  const auto submit =
      run_command({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out", out.string(),
                   "--steps", std::to_string(steps), "--slurm", "--shards", "2"},
                  dir / "submit.log");
  INFO(submit.output);
  REQUIRE(submit.status == 0);
  Submission result{submit.output, submitted_job(submit.output)};
  REQUIRE(!result.job.empty());
  return result;
}

}  // namespace fp8lab::testing
