#include "experiments/report/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "experiments/report/noise_floor.hpp"
#include "experiments/report/report_data.hpp"

namespace fp8lab::experiments {

std::optional<double> number_or_null(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  return std::nullopt;
}

bool is_fp8_run(const nlohmann::json& record) {
  return record.value("kind", std::string()) == "fp8";
}

namespace {

std::optional<double> final_field(const nlohmann::json& record, const char* field) {
  if (!record.contains("final") || !record["final"].is_object()) return std::nullopt;
  const auto& final = record["final"];
  if (!final.contains(field)) return std::nullopt;
  return number_or_null(final[field]);
}

}  // namespace

std::optional<double> final_eval_rel_diff(const nlohmann::json& record) {
  auto v = final_field(record, "eval_rel_diff");
  if (v) return std::fabs(*v);
  return std::nullopt;
}

std::optional<double> improvement_ratio(const nlohmann::json& record) {
  const auto initial = final_field(record, "initial_eval_loss");
  const auto final = final_field(record, "eval_loss");
  const auto base_initial = final_field(record, "baseline_initial_eval_loss");
  const auto base_final = final_field(record, "baseline_eval_loss");
  if (!initial || !final || !base_initial || !base_final) return std::nullopt;
  const double baseline_gain = *base_initial - *base_final;
  if (!(baseline_gain > 0)) return std::nullopt;
  return (*initial - *final) / baseline_gain;
}

std::string run_verdict(const nlohmann::json& record, double tolerance) {
  const auto status = record.value("status", std::string());
  if (status == "failed") return "error";
  if (status == "diverged") return "diverged";
  if (status == "unstable") return "unstable";
  if (record.value("kind", std::string()) == "baseline") return "baseline";
  if (auto ratio = improvement_ratio(record); ratio && *ratio < kFailedToTrainImprovement) {
    return "failed to train";
  }
  const auto rel = final_eval_rel_diff(record);
  if (rel && *rel <= tolerance) return "tracks baseline";
  return "degraded";
}

std::string verdict_rules() {
  return "\"tracks baseline\" = |final eval-loss difference| from the baseline on the same seed "
         "within the noise floor of that workload's baseline (the largest difference between "
         "two of its seeds, relative to their median: a recipe no further from the baseline than "
         "one seed from another), or within the fixed " +
         format_percent(kTracksBaselineTolerance) +
         " where fewer than 3 baseline seeds ran; \"failed to train\" = eval loss fell by less "
         "than " +
         format_percent(kFailedToTrainImprovement) +
         " of the baseline's fall. A recipe run on several seeds is one row: medians over its "
         "seeds (n), and the worst seed's verdict if a seed diverged or threw.";
}

int verdict_rank(const std::string& verdict) {
  if (verdict == "tracks baseline") return 0;
  if (verdict == "degraded") return 1;
  if (verdict == "failed to train") return 2;
  if (verdict == "unstable") return 3;
  if (verdict == "diverged") return 4;
  return 5;
}

std::vector<const nlohmann::json*> ranked_runs(const std::vector<nlohmann::json>& records,
                                               const NoiseFloors& floors) {
  struct Judged {
    const nlohmann::json* run;
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
    return (*a.run)["run_id"].get<std::string>() < (*b.run)["run_id"].get<std::string>();
  });
  std::vector<const nlohmann::json*> runs;
  for (const auto& j : judged) runs.push_back(j.run);
  return runs;
}

std::string recipe_value(const nlohmann::json& record, const std::string& axis) {
  if (!record.contains("recipe") || !record["recipe"].is_object()) return "";
  const auto& recipe = record["recipe"];
  if (!recipe.contains(axis)) return "";
  const auto& v = recipe[axis];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::vector<std::string> varied_recipe_axes(const std::vector<nlohmann::json>& records) {
  std::vector<std::string> order;
  std::map<std::string, std::set<std::string>> values;
  for (const auto& r : records) {
    if (!is_fp8_run(r)) continue;
    if (!r.contains("recipe") || !r["recipe"].is_object()) continue;
    // recipe_fields keeps the canonical order; "recipe" (an object) is sorted by nlohmann.
    const auto& fields = r.contains("recipe_fields") ? r["recipe_fields"] : nlohmann::json::array();
    for (const auto& field : fields) {
      const auto name = field.get<std::string>();
      if (!values.contains(name)) order.push_back(name);
      values[name].insert(recipe_value(r, name));
    }
    for (const auto& [name, v] : r["recipe"].items()) {
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
