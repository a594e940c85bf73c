// Errors, as opposed to results (docs/architecture.md, "Errors and results"). A recipe that fails
// to train or diverges is a *result*: its run record says so, and --resume counts it done. A
// failure of the machine is an *error*: an I/O error (ENOSPC, EDQUOT, EIO: io_error.hpp), a run's
// process killed by a signal (the OOM killer, a preempted Slurm task), a process that crashed or
// ended without writing its record, or a baseline that errored (its runs are then *waiting*: not
// started). An error writes no run record: it is logged under logs/<run_id>.log with its cause,
// the command exits kExitErrored, and `fp8lab sweep --resume` runs every errored and waiting run
// again. A Slurm requeue goes through the same path: the requeued task is an errored run. No
// LibTorch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/sweep/child_process.hpp"

namespace fp8lab::experiments {

// Exit status of fp8lab run, sweep and report when a run errored (or, for report and sweep, when
// runs the sweep asked for have no record): fix the cause and rerun with --resume. The others: 0
// done, 1 a run failed (run) or a shadow check found mismatches (sweep), 2 bad input, 130
// interrupted (sweep).
inline constexpr int kExitErrored = 3;

struct RunError {
  std::string run_id;
  std::string cause;   // "no space left on device", "killed by signal 9"
  std::string detail;  // the full message
};

// What `fp8lab run` prints on stderr (hence into its log) when it errs: "fp8lab run: error
// (<cause>): <what>; nothing was recorded for this run: fix the cause and rerun (fp8lab sweep
// --resume runs it again)".
std::string error_line(const std::string& cause, const std::string& what);

// Why a run's process ended without a record: its cause from its log's last error_line when it
// exited kExitErrored, "killed by signal N" when a signal ended it, else "exited with status N
// without writing its record".
RunError child_error(const std::string& run_id, const ChildExit& exit,
                     const std::filesystem::path& log);

// Appends "fp8lab sweep: run <id> errored (<cause>): <detail>; ..." to the run's log (best effort:
// the disk may be full) and prints it on stderr.
void log_run_error(const RunError& error, const std::filesystem::path& log);

// The sweep's closing line: "3 runs errored (2 no space left on device, 1 killed by signal 9), 4
// wait for a baseline that errored; fix the cause and rerun with --resume".
std::string errors_summary(const std::vector<RunError>& errors, std::size_t waiting);

}  // namespace fp8lab::experiments
