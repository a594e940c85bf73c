#include "experiments/sweep/sweep_driver.hpp"

#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/results/baseline_archive.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/run/null_run.hpp"
#include "experiments/run/probe_recipes.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/python_run.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/run/run_ids.hpp"
#include "experiments/sweep/child_process.hpp"
#include "experiments/sweep/directory_lock.hpp"
#include "experiments/sweep/parallelism.hpp"
#include "experiments/sweep/progress.hpp"
#include "experiments/sweep/run_errors.hpp"
#include "experiments/sweep/run_job.hpp"
#include "experiments/workloads/registry.hpp"
#include "recipes/fields.hpp"
#include "recipes/heatmap_axes.hpp"
#include "recipes/sweep.hpp"
#include "recipes/text_file.hpp"

namespace fp8lab::experiments {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

// Where the sweep's models train (BackendChoice::trains_on_cuda): "cpu" or "cuda".
std::string model_device(const SweepOptions& options) {
  return options.backend.trains_on_cuda() ? "cuda" : "cpu";
}

// The pre-registered tests as sweep.json holds them: {"verdict": label} or {"contrast": [a, b]}
// (experiments/stats/multiplicity.hpp reads them).
nlohmann::json hypotheses_json(const recipes::SweepHypotheses& hypotheses) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& h : hypotheses.tests) {
    out.push_back(h.kind == "verdict" ? nlohmann::json{{"verdict", h.labels[0]}}
                                      : nlohmann::json{{"contrast", h.labels}});
  }
  return out;
}

std::vector<std::string> null_arm_names(const std::vector<recipes::NullArm>& arms) {
  std::vector<std::string> names;
  for (const recipes::NullArm arm : arms) names.push_back(recipes::null_arm_name(arm));
  return names;
}

nlohmann::json sweep_record(const SweepOptions& options, const recipes::SweepExpansion& e,
                            const std::string& text_hash) {
  nlohmann::json requested = nlohmann::json::array();
  for (std::size_t i = 0; i < e.requested.size(); ++i) {
    const auto& r = e.requested[i];
    std::string note;
    for (const auto& reason : r.reasons) note.append(note.empty() ? "" : "; ").append(reason);
    requested.push_back({{"index", i + 1},
                         {"label", recipes::request_label(e.sweep, r)},
                         {"workload", r.workload},
                         {"seed", r.seed},
                         {"run_id", e.runs[r.run].id},
                         {"is_representative", r.is_representative},
                         {"note", note}});
  }
  return {{"schema", "fp8lab.sweep"},
          {"schema_version", kResultsSchemaVersion},
          {"sweep_file", std::filesystem::absolute(options.sweep_file).string()},
          {"sweep_name", e.sweep.name},
          {"sweep_text_fnv1a", text_hash},
          {"steps", options.steps ? nlohmann::json(*options.steps) : nlohmann::json(nullptr)},
          {"high_precision", std::string(name(options.high_precision))},
          {"model_device", model_device(options)},
          {"baseline_seeds", e.sweep.baseline_seeds},
          {"seed_planning", e.sweep.seed_planning.automatic
                                ? nlohmann::json{{"budget", e.sweep.seed_planning.budget},
                                                 {"pilot_seeds", e.sweep.seeds}}
                                : nlohmann::json(nullptr)},
          {"practical_band", e.sweep.practical_band},
          {"alpha", e.sweep.hypotheses.alpha},
          {"hypotheses", hypotheses_json(e.sweep.hypotheses)},
          {"instability",
           {{"text", recipes::instability_rule_text(e.sweep.instability)},
            {"description", recipes::describe_instability_rule(e.sweep.instability)},
            {"default", e.sweep.instability.site.line == 0}}},
          {"null_runs", !e.sweep.null_runs.empty()},
          {"null_arms", null_arm_names(e.sweep.null_runs)},
          {"null_noise", e.sweep.null_noise},
          {"layer_stats_every", e.sweep.layer_stats_every},
          {"what_if", e.sweep.what_if},
          {"probes", e.sweep.probes.recipes},
          {"probe_every", e.sweep.probes.every},
          {"probe_attribution", recipes::probe_attribution_name(e.sweep.probes.attribution)},
          {"probe_draws", e.sweep.probes.draws},
          {"probe_seeds", e.sweep.probes.seeds},
          {"grid_size", e.grid_size},
          {"distinct_runs", e.runs.size()},
          {"requested", requested}};
}

// Refuses a directory that holds another configuration's results (see sweep_driver.hpp).
void check_directory(const SweepOptions& options, const ResultsDirectory& directory,
                     const nlohmann::json& sweep) {
  // A FIFO or a device in its place is named (no_follow.hpp), never read from.
  if (const auto text = read_regular_file(directory.sweep_path())) {
    nlohmann::json existing;
    try {
      existing = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(directory.sweep_path().string() + ": not valid JSON (" + e.what() +
                               ")");
    }
    // A sweep.json from before model_device existed was trained on the CPU.
    if (!existing.contains("model_device")) existing["model_device"] = "cpu";
    for (const char* key : {"sweep_text_fnv1a", "steps", "high_precision", "model_device"}) {
      if (existing.value(key, nlohmann::json()) != sweep[key]) {
        throw std::runtime_error(directory.root().string() +
                                 " holds results of another sweep configuration (" + key + " " +
                                 existing.value(key, nlohmann::json()).dump() + ", now " +
                                 sweep[key].dump() + "): choose another --out");
      }
    }
  }
  if (!options.resume) {
    // Invalid record files count too: they are runs of that sweep left unfinished.
    const auto recorded = directory.run_record_paths();
    if (!recorded.empty()) {
      throw std::runtime_error(directory.root().string() + " already holds " +
                               std::to_string(recorded.size()) +
                               " run records: pass --resume to continue that sweep, or choose "
                               "another --out");
    }
  }
}

struct Job {
  std::string run_id;
  std::string kind;  // baseline | null | fp8
  std::vector<std::string> arguments;
  // The run as its process gets it (an FP8 run's job file, run_job.hpp) and the baseline it
  // compares with (baseline_run_id).
  RunRequest request;
};

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

// method: ablate without a layer list: the Linears the base recipe converts in the workload.
std::vector<std::string> ablated_layers(const recipes::Sweep& sweep) {
  const auto recipe = recipes::resolve(sweep.base, recipes::Strictness::sweep);
  auto model = make_workload(sweep.workloads.front())->make_model(0);
  return convert_model(*model, recipe, make_backend({"sim", 0}));
}

// The sweep's distinct runs, filed under this backend's and these steps' ids (run_ids.hpp: runs
// trained on the GPU are filed apart from CPU-trained ones, and runs of a --steps override apart
// from the workload's own steps), after checking its workloads and --heatmap axes.
// id_without_steps maps each id to the one it had before run ids named --steps.
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

// This shard's runs: those whose index in the expansion is shard_index modulo shard_count.
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

void print_dry_run(const recipes::SweepExpansion& expansion, std::size_t shard_size,
                   const SweepOptions& options) {
  std::fputs(recipes::format_dry_run(expansion).c_str(), stdout);
  if (options.shard_count > 1) {
    std::printf("shard %d/%d: %zu of the %zu distinct runs\n", options.shard_index,
                options.shard_count, shard_size, expansion.runs.size());
  }
}

// Checks that DIR holds this configuration's results only and writes its sweep.json.
void record_sweep(const SweepOptions& options, const ResultsDirectory& directory,
                  const recipes::SweepExpansion& expansion, const std::string& text) {
  const auto sweep = sweep_record(options, expansion, recipes::fnv1a_hex(text));
  // Another sweep (another shard, maybe another configuration) may be checking DIR now.
  const HeldLock sweep_file_lock = lock_sweep_file(directory);
  check_directory(options, directory, sweep);
  write_results_file(directory, "sweep.json", sweep.dump(2) + "\n");
  if (const auto removed = directory.remove_stale_temp_files(); !removed.empty()) {
    std::fprintf(stderr,
                 "fp8lab sweep: removed %zu temp files left by processes that died "
                 "(killed, or a full disk), e.g. %s\n",
                 removed.size(), removed[0].c_str());
  }
}

// FP8 run ids name --steps since issue 19; a directory swept with --steps before holds its FP8
// records under the id without them. --resume renames such a record to the new id when it is a
// record of these steps (sweep.json already holds the directory to one --steps; steps_planned is
// checked too), so that the run is not run again; any other record stays as it is.
void adopt_record_without_steps(const ResultsDirectory& directory, const std::string& old_id,
                                const std::string& id, std::int64_t steps) {
  if (old_id == id || directory.has_record(id)) return;
  const auto old = read_run_record_file(directory.run_record_path(old_id));
  if (!old.record) return;
  auto record = run_record_from_json(*old.record);
  if (record.kind != "fp8" || record.steps_planned.get() != std::optional<std::int64_t>(steps)) {
    return;
  }
  record.run_id = id;
  write_run_record(directory, record);
  std::filesystem::remove(old.path);
  std::fprintf(stderr,
               "fp8lab sweep: %s was filed under %s before run ids named --steps; now "
               "%s\n",
               old.path.c_str(), old_id.c_str(), directory.run_record_path(id).c_str());
}

// What still has to run in this shard: each needed baseline once, then the unrecorded runs.
struct Jobs {
  std::vector<Job> baselines;
  std::vector<Job> runs;
};

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

// The jobs of this shard; runs already recorded are counted in outcome.skipped.
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

// The baselines, then the runs; false when interrupted.
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

// seeds: auto: each row planned from its pilot's records, printed, and the runs of its seeds
// beyond the pilot (ids as expand_sweep files them).
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

// seeds: auto plans a row from its whole pilot, which one sweep of the whole expansion runs:
// refused where `split` (--shard, --slurm) would split it.
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
