#include "experiments/stats/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

std::optional<double> number_or_null(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  return std::nullopt;
}

bool is_fp8_run(const RunRecord& record) { return record.kind == "fp8"; }

namespace {

// A figure of the record's "final" part; nullopt when the record has no such part or figure.
std::optional<double> final_field(const RunRecord& record, Field<double> FinalFigures::*field) {
  if (!record.final.has_value()) return std::nullopt;
  return ((*record.final).*field).get();
}

}  // namespace

std::optional<double> final_eval_rel_diff(const RunRecord& record) {
  auto v = final_field(record, &FinalFigures::eval_rel_diff);
  if (v) return std::fabs(*v);
  return std::nullopt;
}

std::optional<double> improvement_ratio(const RunRecord& record) {
  const auto initial = final_field(record, &FinalFigures::initial_eval_loss);
  const auto final = final_field(record, &FinalFigures::eval_loss);
  const auto base_initial = final_field(record, &FinalFigures::baseline_initial_eval_loss);
  const auto base_final = final_field(record, &FinalFigures::baseline_eval_loss);
  if (!initial || !final || !base_initial || !base_final) return std::nullopt;
  const double baseline_gain = *base_initial - *base_final;
  if (!(baseline_gain > 0)) return std::nullopt;
  return (*initial - *final) / baseline_gain;
}

std::string run_verdict(const RunRecord& record, double tolerance) {
  const auto& status = *record.status;
  if (status == "failed") return "error";
  if (status == "diverged") return "diverged";
  if (status == "unstable") return "unstable";
  if (record.kind == "baseline") return "baseline";
  if (auto ratio = improvement_ratio(record); ratio && *ratio < kFailedToTrainImprovement) {
    return "failed to train";
  }
  const auto rel = final_eval_rel_diff(record);
  if (rel && *rel <= tolerance) return "within tolerance";
  return "beyond tolerance";
}

int verdict_rank(const std::string& verdict) {
  if (verdict == "within tolerance") return 0;
  if (verdict == "beyond tolerance") return 1;
  if (verdict == "failed to train") return 2;
  if (verdict == "unstable") return 3;
  if (verdict == "diverged") return 4;
  return 5;
}

std::vector<const RunRecord*> ranked_runs(const std::vector<RunRecord>& records,
                                          const NoiseFloors& floors) {
  struct Judged {
    const RunRecord* run;
    int rank;     // of its verdict
    double diff;  // final eval rel diff, +inf without one
  };
  std::vector<Judged> judged;
  for (const auto& r : records) {
    if (!is_fp8_run(r)) continue;
    judged.push_back({&r, verdict_rank(run_verdict(r, floors.of(r).tolerance)),
                      final_eval_rel_diff(r).value_or(INFINITY)});
  }
  std::stable_sort(judged.begin(), judged.end(), [](const Judged& a, const Judged& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.diff != b.diff) return a.diff < b.diff;
    return a.run->run_id < b.run->run_id;
  });
  std::vector<const RunRecord*> runs;
  for (const auto& j : judged) runs.push_back(j.run);
  return runs;
}

std::string recipe_value(const RunRecord& record, const std::string& axis) {
  return record.recipe_value(axis);
}

std::vector<std::string> varied_recipe_axes(const std::vector<RunRecord>& records) {
  std::vector<std::string> order;
  std::map<std::string, std::set<std::string>> values;
  for (const auto& r : records) {
    if (!is_fp8_run(r)) continue;
    if (!r.recipe.has_value()) continue;
    // recipe_fields keeps the canonical order; "recipe" (a map) is sorted.
    for (const auto& name : *r.recipe_fields) {
      if (!values.contains(name)) order.push_back(name);
      values[name].insert(recipe_value(r, name));
    }
    for (const auto& [name, v] : *r.recipe) {
      if (!values.contains(name)) order.push_back(name);
      values[name].insert(recipe_value(r, name));
    }
  }
  std::vector<std::string> varied;
  for (const auto& name : order) {
    if (values[name].size() > 1) varied.push_back(name);
  }
  std::stable_sort(varied.begin(), varied.end(), [&](const std::string& a, const std::string& b) {
    return values[a].size() > values[b].size();
  });
  return varied;
}

}  // namespace fp8lab::experiments
