#include "experiments/sweep/sweep_driver.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

#include "experiments/results/results_files.hpp"
#include "experiments/sweep/directory_lock.hpp"
#include "experiments/sweep/sweep_directory.hpp"
#include "experiments/sweep/sweep_plan.hpp"
#include "experiments/sweep/sweep_pool.hpp"
#include "recipes/sweep.hpp"
#include "recipes/text_file.hpp"

namespace fp8lab::experiments {
namespace {

void print_dry_run(const recipes::SweepExpansion& expansion, std::size_t shard_size,
                   const SweepOptions& options) {
  std::fputs(recipes::format_dry_run(expansion).c_str(), stdout);
  if (options.shard_count > 1) {
    std::printf("shard %d/%d: %zu of the %zu distinct runs\n", options.shard_index,
                options.shard_count, shard_size, expansion.runs.size());
  }
}

}  // namespace

std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t used_i = 0, used_n = 0;
      const int i = std::stoi(text.substr(0, slash), &used_i);
      const int n = std::stoi(text.substr(slash + 1), &used_n);
      if (used_i == slash && used_n == text.size() - slash - 1 && n >= 1 && i >= 0 && i < n) {
        return {i, n};
      }
    }
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--shard '" + text +
                              "': expected i/n with 0 <= i < n, e.g. 0/4 (Slurm: "
                              "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)");
}

SweepPlan prepare_sweep_directory(const SweepOptions& options) {
  const auto text = recipes::read_text_file(options.sweep_file.string());
  std::map<std::string, std::string> id_without_steps;
  const auto expansion = expand_sweep(options, text, id_without_steps);
  refuse_split_pilot(options, expansion.sweep, true);  // --slurm runs shards
  const ResultsDirectory directory(options.output);
  check_results_subdirectories(directory);
  record_sweep(options, directory, expansion, text);
  return {expansion.sweep.name, expansion.runs.size()};
}

SweepOutcome run_sweep(const SweepOptions& options) {
  // Read once: the text is parsed, hashed into sweep.json and stored in every run's record.
  const auto text = recipes::read_text_file(options.sweep_file.string());
  std::map<std::string, std::string> id_without_steps;  // for adopt_record_without_steps
  const auto expansion = expand_sweep(options, text, id_without_steps);
  const auto shard = shard_runs(expansion, options);
  if (!options.dry_run) check_seed_planning(options, expansion.sweep);
  SweepOutcome outcome;
  outcome.runs_in_shard = shard.size();
  if (options.dry_run) {
    print_dry_run(expansion, shard.size(), options);
    return outcome;
  }

  const ResultsDirectory directory(options.output);
  // A link planted in place of runs/, baselines/, ... is refused before anything runs.
  check_results_subdirectories(directory);
  // Held until the sweep returns: a second sweep of this shard into DIR is refused.
  const HeldLock shard_lock = lock_shard(directory, options.shard_index, options.shard_count);
  record_sweep(options, directory, expansion, text);
  const Jobs jobs =
      plan_jobs(options, directory, expansion, shard, text, id_without_steps, outcome);
  if (!run_all_jobs(jobs, options, directory, outcome)) {
    outcome.interrupted = true;
    return outcome;
  }
  if (expansion.sweep.seed_planning.automatic) {
    const auto extra = planned_runs(options, directory, expansion);
    std::vector<const recipes::SweepRun*> planned;
    for (const auto& run : extra) planned.push_back(&run);
    outcome.runs_in_shard += planned.size();
    const Jobs more =
        plan_jobs(options, directory, expansion, planned, text, id_without_steps, outcome);
    if (!run_all_jobs(more, options, directory, outcome)) {
      outcome.interrupted = true;
      return outcome;
    }
  }
  // Also after errors: the report says at its top which runs are missing; unless errors left no
  // record at all to report (the closing line says what happened).
  const bool errored = !outcome.errors.empty() || !outcome.waiting.empty();
  outcome.report_due = !errored || !directory.run_record_paths().empty();
  return outcome;
}

}  // namespace fp8lab::experiments
