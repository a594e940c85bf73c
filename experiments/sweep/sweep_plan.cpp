#include "experiments/sweep/sweep_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/results/baseline_archive.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/run/null_run.hpp"
#include "experiments/run/probe_recipes.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/python_run.hpp"
#include "experiments/run/run_ids.hpp"
#include "experiments/sweep/child_process.hpp"
#include "experiments/sweep/run_job.hpp"
#include "experiments/sweep/sweep_directory.hpp"
#include "experiments/workloads/registry.hpp"
#include "recipes/fields.hpp"
#include "recipes/heatmap_axes.hpp"

namespace fp8lab::experiments {
namespace {

// The sweep as its runs on a seed outside probe_seeds see it (recipes/probe_settings.hpp).
recipes::Sweep without_probes(recipes::Sweep sweep) {
  sweep.probes = {};
  return sweep;
}

std::vector<std::string> common_arguments(const SweepOptions& options,
                                          const recipes::Sweep& sweep) {
  std::vector<std::string> a = {"--out", options.output.string(), "--baseline-precision",
                                std::string(name(options.high_precision))};
  if (options.steps) {
    a.push_back("--steps");
    a.push_back(std::to_string(*options.steps));
  }
  a.push_back("--backend");
  a.push_back(options.backend.name);
  if (options.backend.shadow_every > 0) {
    a.push_back("--shadow-every");
    a.push_back(std::to_string(options.backend.shadow_every));
  }
  // The sweep's layer statistics (sweep.hpp: layer_stats_every, what_if), for every run.
  if (sweep.layer_stats_every > 0) {
    a.push_back("--layer-stats-every");
    a.push_back(std::to_string(sweep.layer_stats_every));
  }
  // The pre-registered instability rule (recipes/instability_rule.hpp), for every run.
  a.push_back("--instability");
  a.push_back(recipes::instability_rule_text(sweep.instability));
  if (!sweep.what_if.empty()) {
    a.push_back("--what-if");
    std::string names;
    for (const auto& name : sweep.what_if) names.append(names.empty() ? "" : ",").append(name);
    a.push_back(names);
  }
  // The on-trajectory probes (recipes/probe_settings.hpp), for every run: baselines probe the
  // recipes, FP8 runs the exact step at their own weights.
  if (sweep.probes.every > 0) {
    a.insert(a.end(), {"--probe-every", std::to_string(sweep.probes.every), "--probe-attribution",
                       recipes::probe_attribution_name(sweep.probes.attribution), "--probe-draws",
                       std::to_string(sweep.probes.draws)});
    for (const auto& word : sweep.probes.recipes) a.insert(a.end(), {"--probe", word});
  }
  return a;
}

// method: ablate without a layer list: the Linears the base recipe converts in the workload.
std::vector<std::string> ablated_layers(const recipes::Sweep& sweep) {
  const auto recipe = recipes::resolve(sweep.base, recipes::Strictness::sweep);
  auto model = make_workload(sweep.workloads.front())->make_model(0);
  return convert_model(*model, recipe, make_backend({"sim", 0}));
}

// Builds the jobs of one shard; the arguments, request and identity of each job are decided here.
class JobPlanner {
 public:
  JobPlanner(const SweepOptions& options, const ResultsDirectory& directory,
             const recipes::Sweep& sweep)
      : options_(options),
        directory_(directory),
        sweep_(sweep),
        executable_(current_executable().string()),
        common_(common_arguments(options, sweep)),
        common_unprobed_(common_arguments(options, without_probes(sweep))) {
    common_request_.high_precision = options.high_precision;
    common_request_.steps = options.steps;
    common_request_.backend = options.backend;
    common_request_.layer_stats_every = sweep.layer_stats_every;
    common_request_.what_if = sweep.what_if;
    common_request_.probes = sweep.probes;
    common_request_.instability = sweep.instability;
  }

  // The baseline of (workload, seed), unless already planned or recorded.
  void need_baseline(const std::string& workload, std::int64_t seed) {
    if (!baseline_keys_.insert({workload, seed}).second) return;
    Job job;
    job.kind = "baseline";
    job.request = request(seed);
    job.request.workload = workload;
    job.request.seed = seed;
    job.run_id = placed_run_id(
        baseline_run_id(workload, seed, options_.high_precision, options_.steps), options_.backend);
    job.arguments = {executable_, "run",    "--baseline-only",   "--workload",
                     workload,    "--seed", std::to_string(seed)};
    job.arguments.insert(job.arguments.end(), common(seed).begin(), common(seed).end());
    // A finished baseline whose archive is bad is set aside and runs again (baseline_archive.hpp).
    const auto file = read_run_record_file(directory_.run_record_path(job.run_id));
    if (const auto aside = set_aside_bad_baseline(directory_, file)) {
      std::fprintf(stderr, "fp8lab sweep: %s\n", aside->c_str());
    } else if (recorded(job.run_id)) {
      return;
    }
    jobs_.baselines.push_back(std::move(job));
  }

  // The null runs of (workload, seed), one per arm (sweep.hpp: null_runs), unless already
  // planned or recorded.
  void need_null_runs(const std::string& workload, std::int64_t seed) {
    if (!null_keys_.insert({workload, seed}).second) return;
    for (const recipes::NullArm arm : sweep_.null_runs) need_null_run(workload, seed, arm);
  }

  void need_null_run(const std::string& workload, std::int64_t seed, recipes::NullArm arm) {
    Job job;
    job.kind = "null";
    job.request = request(seed);
    job.request.workload = workload;
    job.request.seed = seed;
    job.request.null_arm = arm;
    job.request.null_noise = sweep_.null_noise;
    job.run_id = null_run_id(baseline_run_id(job.request), arm);
    job.arguments = {executable_, "run",    "--null-run",        "--workload",
                     workload,    "--seed", std::to_string(seed)};
    if (arm == recipes::NullArm::per_step) {
      job.arguments.insert(job.arguments.end(),
                           {"--null-arm", "per_step", "--null-noise", sweep_.null_noise});
    }
    job.arguments.insert(job.arguments.end(), common(seed).begin(), common(seed).end());
    if (!recorded(job.run_id)) jobs_.runs.push_back(std::move(job));
  }

  // The FP8 run `run` of the sweep read from `text`.
  void add_run(const recipes::SweepExpansion& expansion, const recipes::SweepRun& run,
               const std::string& text) {
    Job job;
    job.kind = "fp8";
    job.run_id = run.id;
    job.request = request(run.seed);
    job.request.workload = run.workload;
    job.request.seed = run.seed;
    job.request.recipe = run.recipe;
    job.request.run_id = run.id;
    job.request.provenance = sweep_run_provenance(expansion, run, text);
    // The process reads its run from the job file (run_job.hpp), not from the sweep file.
    job.arguments = {
        executable_, "run",
        "--job",     std::filesystem::absolute(run_job_path(directory_, run.id)).string(),
        "--run-id",  run.id};
    job.arguments.insert(job.arguments.end(), common(run.seed).begin(), common(run.seed).end());
    jobs_.runs.push_back(std::move(job));
  }

  Jobs take() { return std::move(jobs_); }

  // Whether `run_id` has a record that counts as done: any valid record, except a "failed" one
  // under --retry-failed, which is set aside (runs/.<id>.json.invalid-<n>) so that the run runs
  // again.
  bool recorded(const std::string& run_id) const {
    const auto file = read_run_record_file(directory_.run_record_path(run_id));
    if (!file.record) return false;
    const auto record = run_record_from_json(*file.record);
    if (!options_.retry_failed || record.status.value_or("") != "failed") return true;
    const auto aside = directory_.set_aside(file);
    std::fprintf(stderr,
                 "fp8lab sweep: --retry-failed: %s was failed (%s); kept as %s, the run "
                 "runs again\n",
                 file.path.c_str(),
                 record.error.value_or("no error recorded").substr(0, 200).c_str(), aside.c_str());
    return false;
  }

 private:
  const SweepOptions& options_;
  const ResultsDirectory& directory_;
  const recipes::Sweep& sweep_;
  const std::string executable_;
  // The arguments and request of a run on a seed outside probe_seeds: no probes.
  const std::vector<std::string>& common(std::int64_t seed) const {
    return recipes::probes_seed(sweep_.probes, seed) ? common_ : common_unprobed_;
  }
  RunRequest request(std::int64_t seed) const {
    auto r = common_request_;
    if (!recipes::probes_seed(sweep_.probes, seed)) r.probes = {};
    return r;
  }

  const std::vector<std::string> common_;
  const std::vector<std::string> common_unprobed_;
  RunRequest common_request_;
  std::set<std::pair<std::string, std::int64_t>> baseline_keys_;
  std::set<std::pair<std::string, std::int64_t>> null_keys_;
  Jobs jobs_;
};

// seeds: auto: the rows of the pilot (runs that differ in seed only), in expansion order.
std::vector<std::vector<const recipes::SweepRun*>> pilot_rows(
    const recipes::SweepExpansion& expansion) {
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<const recipes::SweepRun*>> rows;
  for (const auto& run : expansion.runs) {
    const auto key = recipes::canonical_string(run.recipe) + "|" + run.workload;
    const auto [it, inserted] = index.try_emplace(key, rows.size());
    if (inserted) rows.emplace_back();
    rows[it->second].push_back(&run);
  }
  return rows;
}

}  // namespace

recipes::SweepExpansion expand_sweep(const SweepOptions& options, const std::string& text,
                                     std::map<std::string, std::string>& id_without_steps) {
  auto parsed = recipes::parse_sweep_text(text, options.sweep_file.string());
  // Checked (unknown workloads and options stop here) and spelt canonically before the ids; a
  // PyTorch model's sweep (fp8lab.sweep) has the one workload `python` (python_run.hpp).
  check_python_workloads(parsed.workloads, options.sweep_file.string());
  const bool python_model =
      std::any_of(parsed.workloads.begin(), parsed.workloads.end(), is_python_workload);
  if (!python_model) canonicalize_workloads(parsed.workloads, options.sweep_file.string());
  if (python_model && parsed.method == recipes::SweepMethod::ablate &&
      parsed.ablate.layers.empty()) {
    throw std::invalid_argument(options.sweep_file.string() +
                                ": method: ablate over a PyTorch model needs its layers listed "
                                "(ablate: layers: [...]); fp8lab cannot walk a Python model");
  }
  if (parsed.method == recipes::SweepMethod::ablate && parsed.ablate.layers.empty()) {
    parsed.ablate.layers = ablated_layers(parsed);
  }
  // Each probe recipe on each workload, before any run starts (probe_recipes.hpp).
  for (const auto& workload : parsed.workloads) checked_probe_recipes(parsed.probes, workload);
  auto expansion = recipes::expand(parsed);
  for (auto& run : expansion.runs) {
    const auto id = fp8_run_id(run.id, options.steps, options.backend);
    id_without_steps[id] = placed_run_id(run.id, options.backend);
    run.id = id;
  }
  if (!options.heatmap_axes.empty()) {
    // Before any run starts, against the fields the whole sweep varies (not this shard's runs).
    recipes::check_heatmap_axes(options.heatmap_axes, recipes::varied_fields(expansion));
  }
  return expansion;
}

std::vector<const recipes::SweepRun*> shard_runs(const recipes::SweepExpansion& expansion,
                                                 const SweepOptions& options) {
  std::vector<const recipes::SweepRun*> shard;
  for (std::size_t i = 0; i < expansion.runs.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(options.shard_count)) ==
        options.shard_index) {
      shard.push_back(&expansion.runs[i]);
    }
  }
  return shard;
}

Jobs plan_jobs(const SweepOptions& options, const ResultsDirectory& directory,
               const recipes::SweepExpansion& expansion,
               const std::vector<const recipes::SweepRun*>& shard, const std::string& text,
               const std::map<std::string, std::string>& id_without_steps, SweepOutcome& outcome) {
  JobPlanner planner(options, directory, expansion.sweep);
  // The noise floor's extra baseline seeds (sweep.hpp: baseline_seeds) run in shard 0 only, so
  // that shards sharing a directory do not run them twice.
  if (options.shard_index == 0) {
    for (const auto& workload : expansion.sweep.workloads) {
      for (const auto seed : expansion.sweep.baseline_seeds) planner.need_baseline(workload, seed);
    }
  }
  for (const auto* run : shard) {
    planner.need_baseline(run->workload, run->seed);
    planner.need_null_runs(run->workload, run->seed);
    if (options.resume && options.steps && id_without_steps.contains(run->id)) {
      adopt_record_without_steps(directory, id_without_steps.at(run->id), run->id, *options.steps);
    }
    if (planner.recorded(run->id)) {
      ++outcome.skipped;
      continue;
    }
    planner.add_run(expansion, *run, text);
  }
  return planner.take();
}

std::vector<recipes::SweepRun> planned_runs(const SweepOptions& options,
                                            const ResultsDirectory& directory,
                                            const recipes::SweepExpansion& expansion) {
  std::vector<recipes::SweepRun> extra;
  for (const auto& row : pilot_rows(expansion)) {
    const auto& first = *row.front();
    const auto label =
        recipes::request_label(expansion.sweep, expansion.requested[first.requests.front()]) +
        " on " + first.workload;
    std::vector<RunRecord> pilot;
    for (const auto* run : row) {
      auto file = read_run_record_file(directory.run_record_path(run->id));
      if (!file.record) break;
      pilot.push_back(run_record_from_json(*file.record));
    }
    if (pilot.size() != row.size()) {
      std::fprintf(stderr,
                   "fp8lab sweep: seeds: auto: %s: its pilot has %zu of %zu records (an error); "
                   "not planned now, --resume plans it\n",
                   label.c_str(), pilot.size(), row.size());
      continue;
    }
    const RowSeeds seeds = options.plan_row_seeds(pilot, expansion.sweep);
    std::fprintf(stderr, "fp8lab sweep: seeds: auto: %s: %s\n", label.c_str(),
                 seeds.description.c_str());
    for (auto seed = static_cast<std::int64_t>(row.size());
         seed < static_cast<std::int64_t>(seeds.seeds); ++seed) {
      recipes::SweepRun run = first;
      run.seed = seed;
      run.id = fp8_run_id(recipes::sweep_run_id(first.recipe, first.workload, seed), options.steps,
                          options.backend);
      extra.push_back(std::move(run));
    }
  }
  return extra;
}

void refuse_split_pilot(const SweepOptions& options, const recipes::Sweep& sweep, bool split) {
  if (sweep.seed_planning.automatic && split) {
    throw std::invalid_argument(options.sweep_file.string() +
                                ": seeds: auto plans each row from its whole pilot, which --shard "
                                "and --slurm split; not supported yet: use a list of seeds");
  }
}

void check_seed_planning(const SweepOptions& options, const recipes::Sweep& sweep) {
  if (!sweep.seed_planning.automatic) return;
  refuse_split_pilot(options, sweep, options.shard_count > 1);
  if (!options.plan_row_seeds) {
    throw std::logic_error("seeds: auto needs SweepOptions::plan_row_seeds");
  }
}

}  // namespace fp8lab::experiments
