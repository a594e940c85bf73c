#include "experiments/sweep/sweep_directory.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "experiments/linear/backend.hpp"
#include "experiments/results/no_follow.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/sweep/directory_lock.hpp"
#include "recipes/fields.hpp"
#include "recipes/heatmap_axes.hpp"
#include "recipes/text_file.hpp"

namespace fp8lab::experiments {
namespace {

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

}  // namespace

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

}  // namespace fp8lab::experiments
