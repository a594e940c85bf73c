// Hand-made run records for the report tests (no training): a baseline per seed and FP8 runs whose
// eval loss went from 4.0 to a chosen final loss against the baseline's 4.0 -> 2.0, with the
// provenance fields of docs/results-schema.md (runs_as, changed_fields, upstream) when asked for.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/results/run_record.hpp"

namespace fp8lab::testing {

// Hand-made records as the report reads them (experiments/results/run_record.hpp).
inline experiments::RunRecord typed(const nlohmann::json& record) {
  return experiments::run_record_from_json(record);
}
inline std::vector<experiments::RunRecord> typed(const std::vector<nlohmann::json>& records) {
  std::vector<experiments::RunRecord> out;
  for (const auto& r : records) out.push_back(typed(r));
  return out;
}

inline std::string baseline_id(int seed) {
  return "baseline-w-seed" + std::to_string(seed) + "-fp32";
}

// A record of workload "w" (sim backend, fp32, 10 steps planned) with the fields of its kind in
// `rest`. A failed record has no steps_planned (run_executor's failed_record): training never
// reported it.
inline nlohmann::json record_of(const std::string& id, const std::string& kind,
                                const std::string& status, int seed, const nlohmann::json& rest) {
  nlohmann::json record = {
      {"schema", "fp8lab.run"}, {"schema_version", 1},      {"run_id", id},
      {"kind", kind},           {"status", status},         {"workload", "w"},
      {"seed", seed},           {"high_precision", "fp32"}, {"backend", "sim"}};
  if (status != "failed") record["steps_planned"] = 10;
  record.update(rest);
  return record;
}

inline nlohmann::json baseline_record(int seed = 0, double final_loss = 2.0,
                                      const std::string& status = "finished") {
  return record_of(baseline_id(seed), "baseline", status, seed,
                   {{"upstream", nullptr},
                    {"eval", {{{"step", 0}, {"loss", 4.0}}, {{"step", 10}, {"loss", final_loss}}}},
                    {"train", {{{"step", 0}, {"loss", 4.1}}, {{"step", 1}, {"loss", 3.9}}}},
                    {"final", {{"eval_loss", final_loss}, {"initial_eval_loss", 4.0}}}});
}

// An FP8 run on `seed` whose eval loss went from 4.0 to `final_loss` against its baseline's
// 4.0 -> 2.0.
inline nlohmann::json fp8_record(const std::string& id, const std::string& format, int margin,
                                 double final_loss, const std::string& status = "finished",
                                 int seed = 0) {
  const double rel = (final_loss - 2.0) / 2.0;
  return record_of(
      id, "fp8", status, seed,
      {{"baseline_run_id", baseline_id(seed)},
       {"recipe", {{"fp8_format", format}, {"margin", std::to_string(margin)}}},
       {"recipe_fields", {"fp8_format", "margin"}},
       {"recipe_canonical", "fp8_format=" + format + ";margin=" + std::to_string(margin)},
       {"recipe_label", format + " m" + std::to_string(margin)},
       {"diverged_at_step", status == "diverged" ? nlohmann::json(7) : nlohmann::json()},
       {"divergence_reason", status == "diverged" ? "training loss is nan" : ""},
       {"eval",
        {{{"step", 0}, {"loss", 4.0}, {"rel_diff", 0.0}, {"weight_rel_l2", 0.0}},
         {{"step", 10}, {"loss", final_loss}, {"rel_diff", rel}, {"weight_rel_l2", 0.01}}}},
       {"train", {{{"step", 0}, {"loss", 4.1}}, {{"step", 1}, {"loss", 3.95}}}},
       {"layers",
        {{{"step", 0},
          {"layer", "fc1"},
          {"tensor", "grad_output"},
          {"gemm", "dgrad"},
          {"amax", 0.5},
          {"scale_max", 800.0},
          {"count", 100},
          {"underflowed", 3},
          {"saturated", 0}},
         {{"step", 0},
          {"layer", "fc1"},
          {"tensor", "input"},
          {"gemm", "fprop"},
          {"amax", 3.0},
          {"scale_max", 149.0},
          {"count", 100},
          {"underflowed", 1},
          {"saturated", 1}}}},
       {"final",
        {{"eval_loss", final_loss},
         {"baseline_eval_loss", 2.0},
         {"initial_eval_loss", 4.0},
         {"baseline_initial_eval_loss", 4.0},
         {"eval_rel_diff", rel}}},
       {"throughput", {{"steps_per_second", 10.0}, {"step_time_over_fp32", 2.5}}}});
}

// One FP8 run of (format, margin) per seed 0, 1, ...: run ids "<prefix><seed>", each with its
// seed's final loss and status ("finished" past the end of `statuses`).
inline void add_seed_runs(std::vector<nlohmann::json>& records, const std::string& prefix,
                          const std::string& format, int margin, const std::vector<double>& finals,
                          const std::vector<std::string>& statuses = {}) {
  for (std::size_t seed = 0; seed < finals.size(); ++seed) {
    const std::string status = seed < statuses.size() ? statuses[seed] : "finished";
    records.push_back(fp8_record(prefix + std::to_string(seed), format, margin, finals[seed],
                                 status, static_cast<int>(seed)));
  }
}

// The provenance fields of a run fp8lab ran as asked, which accelerate + TE would change or refuse.
inline nlohmann::json& as_asked(nlohmann::json& record, nlohmann::json would_change,
                                nlohmann::json refusal = nullptr) {
  record["runs_as"] = "asked";
  record["changed_fields"] = nlohmann::json::array();
  record["upstream"] = {{"runner", "accelerate + TE"},
                        {"runnable", refusal.is_null()},
                        {"would_change", std::move(would_change)},
                        {"refusal", std::move(refusal)}};
  return record;
}

inline nlohmann::json change(const std::string& field, const std::string& asked,
                             const std::string& runs, const std::string& why) {
  return {{"field", field},
          {"asked", asked},
          {"runs", runs},
          {"why", why},
          {"reference", "accelerate/utils/transformer_engine.py"}};
}

}  // namespace fp8lab::testing
