// fp8lab sweep FILE: every distinct run of a sweep file beside its baselines, then the reports
// (experiments/sweep/sweep_driver.hpp). Ends by printing the path of report.html.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/cli/command_exit.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/cli/option_checks.hpp"
#include "experiments/cli/shared_options.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/render/write_reports.hpp"
#include "experiments/results/io_error.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/stats/seed_plan.hpp"
#include "experiments/stats/shadow_summary.hpp"
#include "experiments/sweep/child_process.hpp"
#include "experiments/sweep/parallelism.hpp"
#include "experiments/sweep/run_errors.hpp"
#include "experiments/sweep/slurm_script.hpp"
#include "experiments/sweep/slurm_submit.hpp"
#include "experiments/sweep/sweep_driver.hpp"
#include "recipes/error.hpp"

namespace fp8lab::experiments::cli {
namespace {

struct SweepArguments {
  std::string file;
  std::string out;
  bool resume = false;
  bool retry_failed = false;
  int jobs = 0;     // 0: chosen per phase (experiments/sweep/parallelism.hpp)
  int threads = 0;  // 0: chosen per phase
  std::string shard = "0/1";
  bool dry_run = false;
  std::int64_t steps = 0;
  std::string high_precision = "fp32";
  std::vector<std::string> heatmap_axes;
  std::string backend = "sim";
  std::int64_t shadow_every = 0;
  // --slurm: submit the sweep as a Slurm array job instead of running it here.
  bool slurm = false;
  bool slurm_script_only = false;
  int shards = 0;  // 0: one array task per distinct run (at most kMaxArrayTasks)
  SlurmSettings slurm_settings;
};

// Slurm's default MaxArraySize is 1001 (array indices 0..1000): more tasks than that by default
// would be refused by sbatch on most clusters.
constexpr int kMaxArrayTasks = 1000;

constexpr int kMaxJobs = 4096;

// --jobs (or --jobs x --threads) above the core count is allowed (a run may wait on I/O) but
// said: the runs share cores, and each run's timings (step seconds, the speed probe) are slower
// than alone.
void note_above_cores(int jobs, int threads) {
  const int cores = available_cores();
  if (jobs > cores) {
    std::fprintf(stderr,
                 "fp8lab sweep: --jobs %d is above the %d cores of this machine: runs "
                 "share cores, and their timings are slower than alone\n",
                 jobs, cores);
  } else if (jobs > 0 && threads > 0 && static_cast<long long>(jobs) * threads > cores) {
    std::fprintf(stderr,
                 "fp8lab sweep: --jobs %d x --threads %d is above the %d cores of this "
                 "machine: threads share cores, and the runs' timings are slower than alone\n",
                 jobs, threads, cores);
  }
}

// The options every array task passes to its sweep besides FILE, --out, --shard and --resume: the
// user's, as given. A new sweep option that changes what runs belongs here too.
std::vector<std::string> task_options(const SweepArguments& a, const SweepOptions& options) {
  std::vector<std::string> o;
  if (a.jobs > 0) o.insert(o.end(), {"--jobs", std::to_string(a.jobs)});
  if (a.threads > 0) o.insert(o.end(), {"--threads", std::to_string(a.threads)});
  if (a.steps > 0) o.insert(o.end(), {"--steps", std::to_string(a.steps)});
  o.insert(o.end(), {"--baseline-precision", a.high_precision, "--backend", a.backend});
  if (a.shadow_every > 0) o.insert(o.end(), {"--shadow-every", std::to_string(a.shadow_every)});
  if (!options.heatmap_axes.empty()) {
    std::string axes;
    for (const auto& axis : options.heatmap_axes) {
      axes.append(axes.empty() ? "" : ",").append(axis);
    }
    o.insert(o.end(), {"--heatmap-axes", axes});
  }
  return o;
}

// --slurm: DIR prepared here (prepare_sweep_directory), then the array job written and submitted.
int submit_to_slurm(const SweepArguments& a, SweepOptions options) {
  namespace fs = std::filesystem;
  options.output = fs::absolute(options.output).lexically_normal();
  create_slurm_directory(options.output);  // an unwritable --out stops first
  const SweepPlan plan = prepare_sweep_directory(options);
  SlurmArray array;
  array.sweep_name = plan.name.empty() ? options.sweep_file.stem().string() : plan.name;
  array.executable = fs::canonical(current_executable());
  array.sweep_file = fs::absolute(options.sweep_file).lexically_normal();
  array.output = options.output;
  const auto runs = static_cast<int>(std::min<std::size_t>(plan.distinct_runs, kMaxArrayTasks));
  array.shards = a.shards > 0 ? a.shards : std::max(1, runs);
  if (a.shards > 0 && static_cast<std::size_t>(a.shards) > plan.distinct_runs) {
    throw std::invalid_argument("--shards " + std::to_string(a.shards) + ": the sweep has " +
                                std::to_string(plan.distinct_runs) +
                                " distinct runs; expected at most that many array tasks");
  }
  array.sweep_options = task_options(a, options);
  const auto submission = submit_slurm_array(array, a.slurm_settings, !a.slurm_script_only);
  if (!submission.warning.empty()) {
    std::fprintf(stderr, "fp8lab sweep: warning: %s\n", submission.warning.c_str());
  }
  const std::string report = shell_quote(array.executable.string()) + " report " +
                             shell_quote(array.output.string());
  if (submission.job_id.empty()) {
    std::printf("wrote %s (%d array tasks, one per shard); submit it with: sbatch %s\n",
                submission.script.c_str(), array.shards,
                shell_quote(submission.script.string()).c_str());
  } else {
    std::printf("submitted Slurm job %s: %d array tasks, one per shard (%s)\n",
                submission.job_id.c_str(), array.shards, submission.script.c_str());
    std::printf("follow it with: squeue -j %s\n", submission.job_id.c_str());
  }
  std::printf("merge the results when it is done: %s\n", report.c_str());
  return 0;
}

// seeds: auto: a row's seeds from its pilot, by the report's plan (seed_plan.hpp), so that the
// sweep runs what the report's "seeds planned/run" column recomputes.
RowSeeds plan_row(const std::vector<RunRecord>& pilot, const recipes::Sweep& sweep) {
  std::vector<const RunRecord*> records;
  for (const auto& record : pilot) records.push_back(&record);
  const auto budget = static_cast<std::size_t>(sweep.seed_planning.budget);
  const SeedPlan plan =
      plan_row_seeds(records, sweep.practical_band, sweep.hypotheses.alpha, budget);
  return {plan.capped, describe_seed_plan(plan, budget)};
}

// The sweep's reports over its directory, as `fp8lab run` writes a run's: from this layer, so
// that the sweep's orchestration (sweep/) never depends on stats/ or render/.
std::filesystem::path write_sweep_reports(const SweepOptions& options) {
  ReportOptions report;
  report.inputs = {options.output};
  report.heatmap_axes = options.heatmap_axes;
  report.default_axes_when_not_varied = true;  // a shard's directory may not vary them
  return write_reports(report).report_html;
}

int sweep(const SweepArguments& a) {
  SweepOptions options;
  options.sweep_file = a.file;
  options.output = a.out.empty()
                       ? std::filesystem::path("runs") / std::filesystem::path(a.file).stem()
                       : std::filesystem::path(a.out);
  options.resume = a.resume;
  options.retry_failed = a.retry_failed;
  options.jobs = a.jobs;
  options.threads = a.threads;
  std::tie(options.shard_index, options.shard_count) = parse_shard(a.shard);
  options.dry_run = a.dry_run;
  if (a.steps > 0) options.steps = a.steps;
  if (a.high_precision == "bf16") {
    options.high_precision = HighPrecision::bf16;
  } else if (a.high_precision != "fp32") {
    throw std::invalid_argument("--baseline-precision '" + a.high_precision +
                                "': accepted fp32, bf16");
  }
  // Checked by run_sweep before any run starts.
  options.heatmap_axes = list_items(a.heatmap_axes, "--heatmap-axes", "FIELD,FIELD");
  // Checked here, before any child starts (the same rules as each run's).
  options.backend = {a.backend, a.shadow_every};
  validate(options.backend);
  options.plan_row_seeds = plan_row;
  if (a.slurm) return submit_to_slurm(a, options);
  note_above_cores(a.jobs, a.threads);
  const auto outcome = run_sweep(options);
  if (a.dry_run) return 0;
  // Also after errors: the report says at its top which runs are missing (run_sweep says
  // whether any record is there to report).
  const std::filesystem::path report_html = outcome.report_due ? write_sweep_reports(options)
                                                               : std::filesystem::path();
  if (outcome.interrupted) {
    std::fprintf(stderr,
                 "fp8lab sweep: interrupted; %zu runs recorded this time. Continue with "
                 "--resume.\n",
                 outcome.recorded);
    return 130;
  }
  std::fprintf(stderr,
               "fp8lab sweep: %zu distinct runs in this shard, %zu already recorded, %zu left to "
               "another sweep on this --out; %zu processes run now (baselines included)\n",
               outcome.runs_in_shard, outcome.skipped, outcome.running_elsewhere, outcome.executed);
  if (!outcome.errors.empty() || !outcome.waiting.empty()) {
    // Errors, not results (run_errors.hpp): the sweep is incomplete, and says so last.
    if (!report_html.empty()) std::printf("%s\n", report_html.string().c_str());
    std::fprintf(stderr, "fp8lab sweep: %s\n",
                 errors_summary(outcome.errors, outcome.waiting.size()).c_str());
    return kExitErrored;
  }
  if (a.shadow_every > 0) {
    // The shadow check's verdict: exit 1 unless every record has one with 0 mismatches.
    const ShadowSummary shadow = summarize_shadow_checks(options.output.string());
    std::fputs(shadow.text.c_str(), stderr);
    if (!shadow.clean()) {
      std::printf("%s\n", report_html.string().c_str());
      return 1;
    }
  }
  std::printf("%s\n", report_html.string().c_str());
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "sweep", "Run every distinct recipe of a sweep file beside its baselines, then report");
  auto a = std::make_shared<SweepArguments>();
  command->add_option("FILE", a->file, "sweep file (recipes/sweep.hpp)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--out", a->out, "output directory (default runs/<file stem>)")
      ->check(output_directory());
  auto* resume = command->add_flag(
      "--resume", a->resume,
      "skip the runs already recorded in --out; runs that errored or waited run again");
  add_flag_with(*command, resume, "--retry-failed", a->retry_failed,
                "also run again the runs recorded as failed (a recipe that failed to train is a "
                "result, kept unless asked)");
  command
      ->add_option("--jobs", a->jobs,
                   "runs at once, each its own process (default: chosen from the cores and "
                   "the runs left, and said)")
      ->check(whole_number_between(1, kMaxJobs,
                                   "processes at once; above the core count they "
                                   "share cores"));
  add_threads_option(*command, a->threads,
                     "threads of each run's sim GEMMs and quantizers (default: the cores "
                     "--jobs leaves; no bit of a run depends on it)");
  command->add_option("--shard", a->shard,
                      "i/n: run only the distinct runs whose index is i modulo n (0 <= i < n)");
  command->add_flag("--dry-run", a->dry_run, "print the expansion and run nothing");
  add_steps_option(*command, a->steps, "override every workload's number of steps");
  add_baseline_precision_option(*command, a->high_precision);
  list_option(command->add_option(
      "--heatmap-axes", a->heatmap_axes,
      "two recipe fields for the report's heatmap (default: the two most varied)"));
  add_backend_option(*command, a->backend);
  add_shadow_every_option(*command, a->shadow_every, "; exit 1 unless every run record has 0");
  auto* slurm = command->add_flag(
      "--slurm", a->slurm,
      "submit the sweep as a Slurm array job, one task per shard, each running its shard with "
      "--resume into --out, which the nodes must share (writes DIR/slurm/sweep.sbatch)");
  add_option_with(*command, slurm, "--shards", a->shards,
                  "array tasks (default: one per distinct run, at most 1000)")
      ->check(whole_number_between(1, kMaxArrayTasks, "array tasks"));
  add_option_with(*command, slurm, "--partition", a->slurm_settings.partition,
                  "the Slurm partition (default: the cluster's)")
      ->check(CLI::Validator([](std::string& text) { return slurm_partition_problem(text); },
                             "PARTITION"));
  add_option_with(*command, slurm, "--time", a->slurm_settings.time,
                  "each task's time limit, e.g. 30, 2:00:00, 1-12 (default: the partition's)")
      ->check(CLI::Validator([](std::string& text) { return slurm_time_problem(text); }, "TIME"));
  add_option_with(*command, slurm, "--array-parallel", a->slurm_settings.array_parallel,
                  "array tasks running at once (default: as many as Slurm gives)")
      ->check(whole_number_between(1, kMaxArrayTasks, "array tasks at once"));
  add_flag_with(*command, slurm, "--slurm-script-only", a->slurm_script_only,
                "write the script and submit nothing");
  // --retry-failed is left out: every attempt of a requeued task would run its failed runs again.
  slurm->excludes("--shard")->excludes("--dry-run")->excludes("--retry-failed");
  command->callback([a] {
    // The sweep's own write failed (sweep.json, a report): an error (run_errors.hpp).
    finish_command(
        "fp8lab sweep", [&] { return sweep(*a); },
        [](const IoError& e) {
          return io_error_text("fp8lab sweep", e, "fix the cause and rerun with --resume");
        });
  });
}

}  // namespace fp8lab::experiments::cli
