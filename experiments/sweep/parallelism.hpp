// How a sweep spreads its runs over the machine: how many run processes at once (--jobs) and how
// many threads each run's sim GEMMs and quantizers use (--threads), from the cores it may use and
// the runs it has left. Processes come first (runs share nothing, so N of them on N cores scale
// best); the cores that fewer runs than cores leave idle become threads of each run. What the
// user gives is kept.
// No bit of a run depends on either number (experiments/linear/cuda_backend.hpp, BackendChoice).
#pragma once

#include <cstddef>
#include <string>

namespace fp8lab::experiments {

struct Parallelism {
  int jobs = 1;     // run processes at once
  int threads = 1;  // threads per run (fp8lab run --threads)
};

// The CPUs this process may run on (its affinity mask, as `nproc` counts them; the online CPUs
// where the mask cannot be read), at least 1.
int available_cores();

// jobs x threads for `runs` runs on `cores` cores. jobs or threads > 0 are the user's and kept;
// 0 means "choose": jobs = min(runs, cores) (at least 1), threads = cores / jobs (at least 1,
// at most kMaxRunThreads); with only --jobs J given, threads = cores / min(J, runs); with only
// --threads T, jobs = min(runs, cores / T) (at least 1).
Parallelism choose_parallelism(int cores, std::size_t runs, int jobs, int threads);

// One line for the user: "3 baselines on 2 cores: 2 at a time x 1 thread each (chosen; --jobs and
// --threads override)". `what` names the runs in the plural ("baselines", "runs"; one drops the
// s).
std::string describe_parallelism(const Parallelism& chosen, int cores, std::size_t runs,
                                 const std::string& what, bool jobs_given, bool threads_given);

}  // namespace fp8lab::experiments
