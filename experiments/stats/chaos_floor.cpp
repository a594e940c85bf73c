#include "experiments/stats/chaos_floor.hpp"

#include <utility>

#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/paired_verdicts.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

std::string family_of(const RunRecord& record) {
  return record.baseline_run_id.has_value() ? baseline_family(*record.baseline_run_id)
                                            : std::string();
}

}  // namespace

std::string ChaosFloor::describe() const {
  if (tail) {
    return describe_interval(*tail) + ", sd " + format_percent(tail->sd) + " (" + perturbation +
           ")";
  }
  if (tail_errors.empty()) return "no finished null run (" + perturbation + ")";
  return "1 null seed: " + signed_percent(tail_errors.front()) + ", no interval (" + perturbation +
         ")";
}

std::string ChaosFloor::cell() const {
  if (tail) {
    return arm + ": sd " + format_percent(tail->sd) + " (n=" + std::to_string(tail->n) + ")";
  }
  if (tail_errors.empty()) return arm + ": -";
  return arm + ": " + signed_percent(tail_errors.front()) + " (n=1)";
}

ChaosFloors::ChaosFloors(const std::vector<RunRecord>& records) {
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::int64_t, double>>>
      by_family;
  for (const auto& r : records) {
    if (r.kind != "null") continue;
    const auto key = std::pair(family_of(r), r.null_arm.value_or("once"));
    auto& floor = families_[key];
    floor.workload = r.workload;
    floor.arm = key.second;
    floor.perturbation = r.perturbation.value_or("null run");
    if (*r.status != "finished") continue;
    if (auto e = tail_rel_error(r)) {
      by_family[key].emplace_back(r.seed.value_or(0), *e);
    }
  }
  for (auto& [key, floor] : families_) {
    append_in_seed_order(std::move(by_family[key]), floor.seeds, floor.tail_errors);
    floor.tail = t_interval(floor.tail_errors);
  }
}

const ChaosFloor* ChaosFloors::of(const RunRecord& record) const {
  const std::string family = family_of(record);
  const auto per_step = families_.find({family, "per_step"});
  if (per_step != families_.end() && !per_step->second.tail_errors.empty()) {
    return &per_step->second;
  }
  const auto once = families_.find({family, "once"});
  if (once != families_.end()) return &once->second;
  return per_step == families_.end() ? nullptr : &per_step->second;
}

std::vector<const ChaosFloor*> ChaosFloors::all() const {
  std::vector<const ChaosFloor*> out;
  for (const auto& [key, floor] : families_) out.push_back(&floor);
  return out;
}

}  // namespace fp8lab::experiments
