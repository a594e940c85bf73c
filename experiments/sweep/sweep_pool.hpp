// Running a sweep's jobs (sweep_jobs.hpp): the baselines, then the runs, each in a process of
// its own under its run's claim (directory_lock.hpp), `jobs` at a time (parallelism.hpp), with
// the progress line, the errors of runs that left no record (run_errors.hpp), and SIGINT/SIGTERM
// stopping the children.
#pragma once

#include "experiments/results/results_store.hpp"
#include "experiments/sweep/sweep_driver.hpp"
#include "experiments/sweep/sweep_jobs.hpp"

namespace fp8lab::experiments {

// The baselines, then the runs; false when interrupted.
bool run_all_jobs(const Jobs& jobs, const SweepOptions& options, const ResultsDirectory& directory,
                  SweepOutcome& outcome);

}  // namespace fp8lab::experiments
