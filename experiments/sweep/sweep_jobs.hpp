// The jobs a sweep plans (sweep_plan.hpp) and its pool runs (sweep_pool.hpp): each run's process
// arguments and the request it is handed.
#pragma once

#include <string>
#include <vector>

#include "experiments/run/run_executor.hpp"

namespace fp8lab::experiments {

struct Job {
  std::string run_id;
  std::string kind;  // baseline | null | fp8
  std::vector<std::string> arguments;
  // The run as its process gets it (an FP8 run's job file, run_job.hpp) and the baseline it
  // compares with (baseline_run_id).
  RunRequest request;
};

// What still has to run in this shard: each needed baseline once, then the unrecorded runs.
struct Jobs {
  std::vector<Job> baselines;
  std::vector<Job> runs;
};

}  // namespace fp8lab::experiments
