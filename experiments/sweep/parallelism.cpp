#include "experiments/sweep/parallelism.hpp"

#include <sched.h>

#include <algorithm>
#include <limits>
#include <thread>

#include "experiments/linear/cuda_backend.hpp"

namespace fp8lab::experiments {

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

Parallelism choose_parallelism(int cores, std::size_t runs, int jobs, int threads) {
  cores = std::max(1, cores);
  const int run_count =
      static_cast<int>(std::min<std::size_t>(runs, std::numeric_limits<int>::max()));
  Parallelism p;
  if (jobs > 0) {
    p.jobs = jobs;
  } else {
    const int per_run = threads > 0 ? threads : 1;
    p.jobs = std::max(1, std::min(run_count, cores / per_run));
  }
  if (threads > 0) {
    p.threads = threads;
  } else {
    // Runs at once: fewer than --jobs when fewer runs are left.
    const int at_once = std::max(1, std::min(p.jobs, std::max(run_count, 1)));
    p.threads = std::clamp(cores / at_once, 1, kMaxRunThreads);
  }
  return p;
}

std::string describe_parallelism(const Parallelism& chosen, int cores, std::size_t runs,
                                 const std::string& what, bool jobs_given, bool threads_given) {
  const std::string noun = runs == 1 && what.ends_with('s') ? what.substr(0, what.size() - 1)
                                                            : what;
  std::string text = std::to_string(runs) + " " + noun + " on " + std::to_string(cores) +
                     (cores == 1 ? " core: " : " cores: ") + std::to_string(chosen.jobs) +
                     " at a time x " + std::to_string(chosen.threads) +
                     (chosen.threads == 1 ? " thread" : " threads") + " each";
  if (jobs_given && threads_given) return text + " (as given by --jobs and --threads)";
  if (jobs_given) return text + " (--jobs as given, threads chosen; --threads overrides)";
  if (threads_given) return text + " (--threads as given, jobs chosen; --jobs overrides)";
  return text + " (chosen from the cores and the runs; --jobs and --threads override)";
}

}  // namespace fp8lab::experiments
