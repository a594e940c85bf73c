#include "experiments/report/recipe_rows.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/report/analysis.hpp"
#include "experiments/report/report_data.hpp"

namespace fp8lab::experiments {
namespace {

// One row per recipe and baseline family (noise_floor.hpp): fields every record has, a failed
// one too (a run that threw has no steps_planned).
std::string group_key(const nlohmann::json& r) {
  // A record without a recipe (a run whose process died before writing one) is its own row.
  if (!r.contains("recipe_canonical") || !r["recipe_canonical"].is_string()) {
    return "run " + r["run_id"].get<std::string>();
  }
  const auto& baseline = r.value("baseline_run_id", nlohmann::json());
  return r["recipe_canonical"].get<std::string>() + "|" +
         (baseline.is_string() ? baseline_family(baseline.get<std::string>()) : "-");
}

std::string row_verdict(const RecipeRow& row) {
  int worst = -1;
  std::string worst_verdict;
  for (const auto* r : row.runs) {
    const auto v = run_verdict(*r, row.floor->tolerance);
    if ((v == "diverged" || v == "error") && verdict_rank(v) > worst) {
      worst = verdict_rank(v);
      worst_verdict = v;
    }
  }
  if (!worst_verdict.empty()) return worst_verdict;
  if (row.runs.size() == 1) return run_verdict(row.first(), row.floor->tolerance);
  std::vector<double> ratios;
  for (const auto* r : row.runs) {
    if (auto ratio = improvement_ratio(*r)) ratios.push_back(*ratio);
  }
  if (auto ratio = median(ratios); ratio && *ratio < kFailedToTrainImprovement) {
    return "failed to train";
  }
  if (row.median_abs_rel_diff && *row.median_abs_rel_diff <= row.floor->tolerance) {
    return "tracks baseline";
  }
  return "degraded";
}

}  // namespace

std::optional<double> RecipeRow::median_at(const char* pointer) const {
  std::vector<double> values;
  for (const auto* r : runs) {
    if (auto v = number_at(*r, pointer)) values.push_back(*v);
  }
  return median(values);
}

std::string RecipeRow::seeds_text() const {
  std::string text;
  for (const auto* r : runs) {
    text += (text.empty() ? "" : ", ") + r->value("seed", nlohmann::json(0)).dump();
  }
  return runs.size() > 1 ? text + " (n=" + std::to_string(runs.size()) + ")" : text;
}

std::string RecipeRow::verdict_text() const {
  if (runs.size() == 1 || not_finished == 0 || not_finished == runs.size()) return verdict;
  return verdict + " (" + std::to_string(not_finished) + " of " + std::to_string(runs.size()) +
         " seeds)";
}

std::vector<RecipeRow> ranked_recipe_rows(const std::vector<nlohmann::json>& records,
                                          const NoiseFloors& floors) {
  std::map<std::string, RecipeRow> groups;
  std::vector<std::string> order;
  for (const auto& r : records) {
    if (r.value("kind", std::string()) == "baseline") continue;
    const auto key = group_key(r);
    if (!groups.contains(key)) order.push_back(key);
    groups[key].runs.push_back(&r);
  }
  std::vector<RecipeRow> rows;
  for (const auto& key : order) {
    auto row = std::move(groups[key]);
    std::stable_sort(row.runs.begin(), row.runs.end(),
                     [](const nlohmann::json* a, const nlohmann::json* b) {
                       return a->value("seed", std::int64_t{0}) < b->value("seed", std::int64_t{0});
                     });
    row.floor = &floors.of(row.first());
    std::vector<double> rel;
    for (const auto* r : row.runs) {
      if ((*r)["status"] != "finished") ++row.not_finished;
      if (auto v = final_eval_rel_diff(*r); v && (*r)["status"] == "finished") rel.push_back(*v);
    }
    row.median_abs_rel_diff = median(rel);
    row.verdict = row_verdict(row);
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const RecipeRow& a, const RecipeRow& b) {
    const int ra = verdict_rank(a.verdict), rb = verdict_rank(b.verdict);
    if (ra != rb) return ra < rb;
    const double da = a.median_abs_rel_diff.value_or(INFINITY);
    const double db = b.median_abs_rel_diff.value_or(INFINITY);
    if (da != db) return da < db;
    return run_label(a.first()) + a.first()["run_id"].get<std::string>() <
           run_label(b.first()) + b.first()["run_id"].get<std::string>();
  });
  return rows;
}

}  // namespace fp8lab::experiments
