// `fp8lab sweep FILE`: expands the sweep (recipes::expand), keeps this shard's distinct runs, skips
// those already recorded (--resume), runs each needed baseline once per (workload, seed) (the
// seeds of its runs, and in shard 0 also the sweep's baseline_seeds) and then
// every run, N at a time with T threads each (parallelism.hpp), each in its own child process
// (child_process.hpp), and finally writes
// the reports. The sweep file is read once, here: each run's process gets its run (canonical
// recipe, provenance) from a job file the sweep writes (run_job.hpp). No LibTorch.
//
// Output directory rules (results_store.hpp for the files):
// - DIR/sweep.json records the sweep file, its text's hash, the step override and the baseline
//   precision. Running into a DIR whose sweep.json says otherwise is refused: records of two
//   configurations never mix.
// - Without --resume a DIR that already holds run records is refused; with --resume, recorded runs
//   (finished, diverged, unstable or failed) are skipped and nothing is repeated; --retry-failed also runs
//   the failed ones again. Delete runs/<id>.json to run one again.
// - A child that ends without writing its record (killed, crashed, a full disk) is an error, not a
//   result (run_errors.hpp): logged under logs/ with its cause, no record, so that --resume runs it
//   again; the runs of a baseline that errored wait (not started). A sweep interrupted by
//   SIGINT/SIGTERM stops its children and records nothing for them.
// - Shard i/n (0 <= i < n) takes the distinct runs whose index in the expansion is i modulo n;
//   each shard runs the baselines its runs need. Shards may share DIR (one file per run) or use
//   their own and be merged by `fp8lab report DIR1 DIR2 ...`.
// - seeds: auto (recipes/sweep.hpp): the pilot runs first (baselines, null runs and the runs of
//   seeds 0, 1, 2), then each row's planned seeds (SweepOptions::plan_row_seeds) with their
//   baselines and null runs, printed per row on stderr. A row whose pilot lacks a record (an
//   error) is not planned this time; --resume plans it.
// - Two sweeps on one DIR never run a run twice (directory_lock.hpp): a second sweep of the same
//   shard is refused while the first runs; a run or baseline another sweep has claimed is left to
//   it (a baseline is waited for: this shard's runs need it). With --resume, a record file that
//   is not a finished run's record (empty, truncated, a stub) is set aside and its run runs again.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/sweep/run_errors.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::experiments {

// seeds: auto (recipes/sweep.hpp, SeedPlanning): how many seeds one row runs, from its pilot's
// records (one per pilot seed, in seed order), and the sentence the sweep prints for it.
struct RowSeeds {
  std::size_t seeds = 0;
  std::string description;
};
using RowSeedPlanner =
    std::function<RowSeeds(const std::vector<RunRecord>& pilot, const recipes::Sweep& sweep)>;

struct SweepOptions {
  std::filesystem::path sweep_file;
  std::filesystem::path output;
  bool resume = false;
  bool retry_failed = false;  // with resume: runs recorded "failed" run again
  // Run processes at once and threads per run (parallelism.hpp); 0: chosen for each phase
  // (baselines, then runs) from `cores` and the runs it has left, and said on stderr.
  int jobs = 0;
  int threads = 0;
  int cores = 0;  // 0: available_cores()
  int shard_index = 0;
  int shard_count = 1;
  bool dry_run = false;
  std::optional<std::int64_t> steps;  // overrides every workload's step count (tests)
  HighPrecision high_precision = HighPrecision::fp32;
  std::vector<std::string> heatmap_axes;
  // Passed to every run (fp8lab run --backend, --shadow-every; cuda_backend.hpp).
  BackendChoice backend;
  // seeds: auto: the plan of a row (fp8lab sweep gives experiments/stats/seed_plan.hpp's, which
  // sweep/ may not include). After the pilot (seeds 0, 1, 2 of every row) the sweep plans every
  // row whose pilot has records and runs its seeds 3 .. n - 1; a resumed sweep plans again from
  // the same records, so it gets the same plan and skips what is recorded. Not with --shard.
  RowSeedPlanner plan_row_seeds;
};

struct SweepOutcome {
  std::size_t runs_in_shard = 0;
  std::size_t skipped = 0;   // already recorded
  std::size_t executed = 0;  // processes started (baselines included)
  std::size_t recorded = 0;  // records written by those processes (or for them, when one died)
  std::size_t running_elsewhere = 0;  // runs another sweep on DIR had claimed (left to it)
  bool interrupted = false;
  std::vector<RunError> errors;      // runs that errored (run_errors.hpp): no record
  std::vector<std::string> waiting;  // runs not started: their baseline errored
  // Whether the reports are to be written now (by the caller: fp8lab sweep calls write_reports,
  // render/write_reports.hpp): false for a dry run, an interrupted sweep, or one whose errors left
  // no record to report.
  bool report_due = false;
};

// Parses "i/n"; std::invalid_argument names the text and the rule.
std::pair<int, int> parse_shard(const std::string& text);

// Throws recipes::RecipeError for a bad sweep file, std::runtime_error for a refused directory.
SweepOutcome run_sweep(const SweepOptions& options);

// What `fp8lab sweep --slurm` does here before it submits the array job (slurm_submit.hpp): the
// sweep file is read and expanded and DIR is checked as run_sweep checks it (another
// configuration's results; records without --resume), and its sweep.json is written, so that a bad
// file or a refused DIR stops now and not in every array task. Runs nothing. Throws as run_sweep.
struct SweepPlan {
  std::string name;  // the sweep's name (recipes::Sweep::name)
  std::size_t distinct_runs = 0;
};
SweepPlan prepare_sweep_directory(const SweepOptions& options);

}  // namespace fp8lab::experiments
