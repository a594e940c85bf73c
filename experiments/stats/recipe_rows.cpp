#include "experiments/stats/recipe_rows.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "experiments/stats/analysis.hpp"
#include "experiments/stats/instability_counts.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

// One row per recipe and baseline family (noise_floor.hpp): fields every record has, a failed
// one too (a run that threw has no steps_planned).
std::string group_key(const RunRecord& r) {
  // A record without a recipe (a run whose process died before writing one) is its own row.
  if (!r.recipe_canonical.has_value()) return "run " + r.run_id;
  return *r.recipe_canonical + "|" +
         (r.baseline_run_id.has_value() ? baseline_family(*r.baseline_run_id) : "-");
}

// Within a verdict class: the mean tail error (signed: lower loss first), else the unpaired
// median, else last.
double error_order(const RecipeRow& row) {
  if (row.paired.tail) return row.paired.tail->mean;
  return row.median_abs_rel_diff.value_or(INFINITY);
}

}  // namespace

std::optional<double> RecipeRow::median_at(Field<double> FinalFigures::*figure) const {
  std::vector<double> values;
  for (const auto* r : runs) {
    if (!r->final.has_value()) continue;
    if (auto v = ((*r->final).*figure).get()) values.push_back(*v);
  }
  return median(values);
}

std::string RecipeRow::seeds_text() const {
  std::string text;
  for (const auto* r : runs) {
    text += (text.empty() ? "" : ", ") + std::to_string(r->seed.value_or(0));
  }
  return runs.size() > 1 ? text + " (n=" + std::to_string(runs.size()) + ")" : text;
}

std::string RecipeRow::verdict_text() const {
  std::string reasons = paired.reason;
  if (paired.test) {
    const auto note = holm_note(*paired.test);
    reasons += (reasons.empty() || note.empty() ? "" : "; ") + note;
  }
  return reasons.empty() ? verdict : verdict + " (" + reasons + ")";
}

std::vector<RecipeRow> ranked_recipe_rows(const std::vector<RunRecord>& records,
                                          const NoiseFloors& floors, double band, double alpha,
                                          const std::optional<SeedPlanning>& planning) {
  const std::vector<std::int64_t> pilot_seeds = planning ? planning->pilot_seeds
                                                         : std::vector<std::int64_t>{};
  std::map<std::string, RecipeRow> groups;
  std::vector<std::string> order;
  for (const auto& r : records) {
    if (!is_fp8_run(r)) continue;
    const auto key = group_key(r);
    if (!groups.contains(key)) order.push_back(key);
    groups[key].runs.push_back(&r);
  }
  std::vector<RecipeRow> rows;
  for (const auto& key : order) {
    auto row = std::move(groups[key]);
    std::stable_sort(row.runs.begin(), row.runs.end(), [](const RunRecord* a, const RunRecord* b) {
      return a->seed.value_or(0) < b->seed.value_or(0);
    });
    row.floor = &floors.of(row.first());
    const auto& baseline = row.first().baseline_run_id;
    row.family = baseline.has_value() ? baseline_family(*baseline) : "-";
    std::vector<double> rel, paired_se, unpaired_se;
    for (const auto* r : row.runs) {
      if (*r->status != "finished") ++row.not_finished;
      if (met_instability(*r)) ++row.unstable_runs;
      if (auto v = final_eval_rel_diff(*r); v && *r->status == "finished") rel.push_back(*v);
      const auto* base = find_baseline(records, *r);
      if (auto se = base ? eval_sampling_error(*r, *base) : std::nullopt) {
        paired_se.push_back(se->paired);
        unpaired_se.push_back(se->unpaired);
      }
    }
    row.median_abs_rel_diff = median(rel);
    row.paired_eval_se = median(paired_se);
    row.unpaired_eval_se = median(unpaired_se);
    row.paired = paired_verdict(row.runs, band, alpha, pilot_seeds);
    if (planning) {
      std::vector<const RunRecord*> pilot;
      for (const auto* r : row.runs) {
        if (std::find(pilot_seeds.begin(), pilot_seeds.end(), r->seed.value_or(-1)) !=
            pilot_seeds.end()) {
          pilot.push_back(r);
        }
      }
      row.seed_plan = plan_row_seeds(pilot, band, alpha, planning->budget);
    }
    row.verdict = row.paired.verdict;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const RecipeRow& a, const RecipeRow& b) {
    const int ra = paired_verdict_rank(a.verdict), rb = paired_verdict_rank(b.verdict);
    if (ra != rb) return ra < rb;
    const double da = error_order(a), db = error_order(b);
    if (da != db) return da < db;
    return run_label(a.first()) + a.first().run_id < run_label(b.first()) + b.first().run_id;
  });
  return rows;
}

}  // namespace fp8lab::experiments
