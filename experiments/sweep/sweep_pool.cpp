#include "experiments/sweep/sweep_pool.hpp"

#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "experiments/results/results_files.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/sweep/child_process.hpp"
#include "experiments/sweep/directory_lock.hpp"
#include "experiments/sweep/parallelism.hpp"
#include "experiments/sweep/progress.hpp"
#include "experiments/sweep/run_errors.hpp"
#include "experiments/sweep/run_job.hpp"

namespace fp8lab::experiments {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

// The record of a claimed job that appeared meanwhile (another process ran it), or nullopt when
// the job still has to run. A record file that is not a finished run's record is set aside, and
// the job runs.
std::optional<RunRecord> record_written_meanwhile(const Job& job,
                                                  const ResultsDirectory& directory) {
  auto file = read_run_record_file(directory.run_record_path(job.run_id));
  if (file.record) return run_record_from_json(*file.record);
  if (file.exists) {
    const auto aside = directory.set_aside(file);
    std::fprintf(stderr,
                 "fp8lab sweep: %s is not a finished run's record (%s); kept as %s, the "
                 "run runs again\n",
                 file.path.c_str(), file.problem.c_str(), aside.c_str());
  }
  return std::nullopt;
}

struct HeldElsewhere {
  Job job;
  std::string holder;  // lock_holder of its claim when it was found held
};

struct RunningJob {
  const Job* job;
  HeldLock claim;  // released after the run's record is written
};

// An FP8 job's file (run_job.hpp), once its process has exited.
void remove_run_job(const ResultsDirectory& directory, const Job& job) {
  std::error_code ignored;  // a baseline has none
  if (job.kind == "fp8") std::filesystem::remove(run_job_path(directory, job.run_id), ignored);
}

// SIGTERM to every running child, then waits for each: their claims are released (with
// `running`) only once no child runs.
void stop_children(std::map<pid_t, RunningJob>& running) {
  for (const auto& [pid, job] : running) ::kill(pid, SIGTERM);
  while (!running.empty()) {
    if (auto exit = wait_for_child()) running.erase(exit->pid);
  }
}

// The test hook FP8LAB_FAULT_KILL_CHILD=N: the N-th run process this sweep starts (counted from 1)
// is killed with SIGKILL at once, as the OOM killer would kill it (docs/architecture.md, "Errors
// and results"; tests/experiments/faults_test.cpp).
void kill_if_faulted(pid_t pid) {
  static const long target = [] {
    const char* text = std::getenv("FP8LAB_FAULT_KILL_CHILD");
    return text == nullptr ? 0L : std::strtol(text, nullptr, 10);
  }();
  static long started = 0;
  if (target > 0 && ++started == target) ::kill(pid, SIGKILL);
}

// run_jobs' loop; `running` is the caller's, so that it can stop the children on an exception.
bool run_jobs_in(const std::vector<Job>& todo, const Parallelism& plan,
                 const ResultsDirectory& directory, ProgressLine& progress, std::size_t& done,
                 SweepOutcome& outcome, std::vector<HeldElsewhere>& held_elsewhere,
                 std::map<pid_t, RunningJob>& running) {
  std::size_t next = 0;
  while (next < todo.size() || !running.empty()) {
    while (g_stop_signal == 0 && next < todo.size() &&
           running.size() < static_cast<std::size_t>(std::max(1, plan.jobs))) {
      const auto& job = todo[next++];
      auto claim = try_claim_run(directory, job.run_id);
      if (!claim) {
        held_elsewhere.push_back({job, lock_holder(claim_path(directory, job.run_id))});
        continue;
      }
      if (const auto record = record_written_meanwhile(job, directory)) {
        ++done;  // another process ran it meanwhile: its record says how
        progress.finished(job.run_id, &*record, done, running.size());
        continue;
      }
      const auto log = directory.root() / "logs" / (job.run_id + ".log");
      if (job.kind == "fp8") {
        try {
          write_run_job(directory, job.request);
        } catch (const IoError& e) {
          // An error, not a result: no record; --resume runs it again (run_errors.hpp).
          outcome.errors.push_back({job.run_id, e.cause(), e.what()});
          log_run_error(outcome.errors.back(), log);
          ++done;
          progress.finished(job.run_id, nullptr, done, running.size());
          continue;
        }
      }
      auto arguments = job.arguments;
      arguments.insert(arguments.end(), {"--threads", std::to_string(plan.threads)});
      const pid_t pid = start_child(arguments, log);
      kill_if_faulted(pid);
      running.emplace(pid, RunningJob{&job, std::move(*claim)});
      ++outcome.executed;
      progress.started(job.run_id, done, running.size());
    }
    if (g_stop_signal != 0) {
      std::vector<std::string> stopped;
      for (const auto& [pid, job] : running) stopped.push_back(job.job->run_id);
      stop_children(running);
      // A run that wrote its record before the signal reached it counts as recorded.
      for (const auto& id : stopped) outcome.recorded += directory.has_record(id) ? 1 : 0;
      return false;
    }
    const auto exit = wait_for_child();
    if (!exit) continue;  // EINTR: look at the stop flag
    const auto it = running.find(exit->pid);
    if (it == running.end()) continue;
    // Out of `running` at once (the child is reaped), its claim held until the record is written.
    const RunningJob ended = std::move(it->second);
    running.erase(it);
    const Job& job = *ended.job;
    remove_run_job(directory, job);
    // Read once: whether the run wrote its record, and what the progress line says of it.
    const auto record_file = read_run_record_file(directory.run_record_path(job.run_id));
    const auto record = record_file.record
                            ? std::optional<RunRecord>(run_record_from_json(*record_file.record))
                            : std::nullopt;
    if (g_stop_signal == 0 && !record) {
      // The child died (a signal, a crash) or erred (a full disk) before writing its record: an
      // error, not a result (run_errors.hpp). Logged with its cause; no record, so that --resume
      // runs it again.
      const auto log = directory.root() / "logs" / (job.run_id + ".log");
      outcome.errors.push_back(child_error(job.run_id, *exit, log));
      log_run_error(outcome.errors.back(), log);
    }
    if (record) ++outcome.recorded;
    ++done;
    progress.finished(job.run_id, record ? &*record : nullptr, done, running.size());
  }
  return g_stop_signal == 0;
}

// Runs jobs, `jobs` at a time, each under its run's claim (directory_lock.hpp). A job another
// process holds the claim of is not run: it goes to `held_elsewhere`. Returns false when
// interrupted. An exception (a record that cannot be written, a fork that fails) stops the
// running children first, as an interruption does, and is rethrown.
bool run_jobs(const std::vector<Job>& todo, const Parallelism& plan,
              const ResultsDirectory& directory, ProgressLine& progress, std::size_t& done,
              SweepOutcome& outcome, std::vector<HeldElsewhere>& held_elsewhere) {
  std::map<pid_t, RunningJob> running;
  try {
    return run_jobs_in(todo, plan, directory, progress, done, outcome, held_elsewhere, running);
  } catch (...) {
    stop_children(running);
    throw;
  }
}

// jobs x threads for a phase of `count` jobs (parallelism.hpp), said on stderr when it runs any.
Parallelism phase_parallelism(const SweepOptions& options, std::size_t count, const char* what) {
  const int cores = options.cores > 0 ? options.cores : available_cores();
  const Parallelism plan = choose_parallelism(cores, count, options.jobs, options.threads);
  if (count > 0) {
    std::fprintf(
        stderr, "fp8lab sweep: %s\n",
        describe_parallelism(plan, cores, count, what, options.jobs > 0, options.threads > 0)
            .c_str());
  }
  return plan;
}

// The baselines, each once: one another process is running (an overlapping shard) is waited for,
// since this shard's runs compare with it, and run here only if that process left no record.
bool run_baselines(const std::vector<Job>& baselines, const SweepOptions& options,
                   const ResultsDirectory& directory, ProgressLine& progress, std::size_t& done,
                   SweepOutcome& outcome) {
  std::vector<HeldElsewhere> held_elsewhere;
  const Parallelism plan = phase_parallelism(options, baselines.size(), "baselines");
  if (!run_jobs(baselines, plan, directory, progress, done, outcome, held_elsewhere)) {
    return false;
  }
  while (!held_elsewhere.empty()) {
    std::vector<Job> waited;
    for (const auto& [job, holder] : held_elsewhere) {
      std::fprintf(stderr, "fp8lab sweep: waiting for baseline %s, which %s is running\n",
                   job.run_id.c_str(), holder.c_str());
      if (!wait_for_claim(directory, job.run_id)) return false;
      waited.push_back(job);
    }
    held_elsewhere.clear();
    const Parallelism waited_plan = phase_parallelism(options, waited.size(), "baselines");
    if (!run_jobs(waited, waited_plan, directory, progress, done, outcome, held_elsewhere)) {
      return false;
    }
  }
  return true;
}

// The runs: one another process is running is left to it (it writes the record). A run whose
// baseline has no record (it errored) is not started: it waits (run_errors.hpp).
bool run_runs(const std::vector<Job>& all_runs, const SweepOptions& options,
              const ResultsDirectory& directory, ProgressLine& progress, std::size_t& done,
              SweepOutcome& outcome) {
  std::vector<Job> runs;
  for (const auto& job : all_runs) {
    const auto baseline = baseline_run_id(job.request);
    if (directory.has_record(baseline)) {
      runs.push_back(job);
      continue;
    }
    outcome.waiting.push_back(job.run_id);
    std::fprintf(stderr,
                 "fp8lab sweep: run %s waits: its baseline %s errored (no record); --resume "
                 "runs both\n",
                 job.run_id.c_str(), baseline.c_str());
    ++done;
  }
  std::vector<HeldElsewhere> held_elsewhere;
  const Parallelism plan = phase_parallelism(options, runs.size(), "runs");
  const bool completed = run_jobs(runs, plan, directory, progress, done, outcome, held_elsewhere);
  for (const auto& [job, holder] : held_elsewhere) {
    std::fprintf(stderr, "fp8lab sweep: run %s is left to %s, which was running it\n",
                 job.run_id.c_str(), holder.c_str());
  }
  outcome.running_elsewhere += held_elsewhere.size();
  done += held_elsewhere.size();
  return completed;
}

// SIGINT and SIGTERM set g_stop_signal while this lives; the previous handlers come back after.
// sigaction without SA_RESTART: a signal interrupts waitpid, so that the loop sees the flag.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction stop {};
    stop.sa_handler = on_stop_signal;
    sigemptyset(&stop.sa_mask);
    ::sigaction(SIGINT, &stop, &previous_int_);
    ::sigaction(SIGTERM, &stop, &previous_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction previous_int_ {
  }, previous_term_{};
};

}  // namespace

bool run_all_jobs(const Jobs& jobs, const SweepOptions& options, const ResultsDirectory& directory,
                  SweepOutcome& outcome) {
  const StopSignals stop_signals;
  ProgressLine progress(jobs.baselines.size() + jobs.runs.size());
  std::size_t done = 0;
  const bool completed =
      run_baselines(jobs.baselines, options, directory, progress, done, outcome) &&
      run_runs(jobs.runs, options, directory, progress, done, outcome);
  progress.finish();
  return completed;
}

}  // namespace fp8lab::experiments
