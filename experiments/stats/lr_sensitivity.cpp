#include "experiments/stats/lr_sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

// The workload spec without its lr setting: the group of runs that differ only in lr.
std::string workload_without_lr(const std::string& spec) {
  auto [name, settings] = split_workload_spec(spec);
  std::string out = name;
  char separator = ':';
  for (const auto& s : settings) {
    if (s.rfind("lr=", 0) == 0) continue;
    out += separator + s;
    separator = ',';
  }
  return out;
}

// The run's initial eval loss: its step-0 eval, else final.initial_eval_loss.
std::optional<double> initial_loss(const RunRecord& r) {
  if (!r.eval->empty()) {
    const auto& first = r.eval->front();
    if (first.step == 0 && first.loss.has_value()) return *first.loss;
  }
  return r.final.has_value() ? r.final->initial_eval_loss.get() : std::nullopt;
}

// Wortsman's min(loss, initial loss); a run that met the instability rule, or whose final loss is
// not finite, counts as its initial loss. nullopt: failed, or no initial loss recorded.
std::optional<double> capped_loss(const RunRecord& r) {
  if (*r.status == "failed") return std::nullopt;
  const auto initial = initial_loss(r);
  if (!initial) return std::nullopt;
  const auto final_loss = r.final.has_value() ? r.final->eval_loss.get() : std::nullopt;
  if (met_instability(r) || !final_loss || !std::isfinite(*final_loss)) return *initial;
  return std::min(*final_loss, *initial);
}

std::optional<MeanInterval> interval_of(const std::vector<std::pair<std::int64_t, double>>& v) {
  std::vector<double> values;
  for (const auto& [seed, x] : v) values.push_back(x);
  return t_interval(values);
}

// Per seed: (seed, a - b) over the seeds both have.
std::vector<std::pair<std::int64_t, double>> paired(
    const std::vector<std::pair<std::int64_t, double>>& a,
    const std::vector<std::pair<std::int64_t, double>>& b) {
  std::map<std::int64_t, double> of_b(b.begin(), b.end());
  std::vector<std::pair<std::int64_t, double>> out;
  for (const auto& [seed, x] : a) {
    if (const auto it = of_b.find(seed); it != of_b.end()) out.emplace_back(seed, x - it->second);
  }
  return out;
}

struct Run {
  double lr;
  std::int64_t seed;
  const RunRecord* record;
};

LrArm make_arm(const std::string& label, const std::vector<double>& lrs, double step,
               const std::vector<Run>& runs) {
  LrArm arm;
  arm.label = label;
  // (lr index, seed) -> run
  std::map<std::int64_t, std::map<std::size_t, const RunRecord*>> by_seed;
  for (std::size_t i = 0; i < lrs.size(); ++i) {
    LrCell cell;
    cell.lr = lrs[i];
    std::vector<const RunRecord*> at_lr;
    std::vector<std::pair<std::int64_t, double>> losses;
    for (const auto& run : runs) {
      if (run.lr != lrs[i]) continue;
      at_lr.push_back(run.record);
      if (const auto loss = capped_loss(*run.record)) {
        losses.emplace_back(run.seed, *loss);
        by_seed[run.seed][i] = run.record;
      }
    }
    std::sort(losses.begin(), losses.end());
    for (const auto& [seed, loss] : losses) {
      cell.seeds.push_back(seed);
      cell.losses.push_back(loss);
    }
    cell.loss = t_interval(cell.losses);
    cell.unstable = count_unstable(at_lr);
    arm.cells.push_back(std::move(cell));
  }
  for (const auto& [seed, at] : by_seed) {
    if (at.size() != lrs.size()) continue;  // a run at every lr, or no per-seed figure
    double sum = 0, lowest = INFINITY;
    std::optional<std::size_t> first_unstable;
    for (std::size_t i = 0; i < lrs.size(); ++i) {
      const double loss = *capped_loss(*at.at(i));
      sum += loss;
      lowest = std::min(lowest, loss);
      if (!first_unstable && met_instability(*at.at(i))) first_unstable = i;
    }
    arm.sensitivities.emplace_back(seed, sum / static_cast<double>(lrs.size()) - lowest);
    double edge = 0;
    if (!first_unstable) {
      edge = std::log10(lrs.back()) + step / 2;
      ++arm.censored;
    } else if (*first_unstable == 0) {
      edge = std::log10(lrs.front()) - step / 2;
      ++arm.censored;
    } else {
      edge = (std::log10(lrs[*first_unstable - 1]) + std::log10(lrs[*first_unstable])) / 2;
    }
    arm.edges.emplace_back(seed, edge);
  }
  arm.edge = interval_of(arm.edges);
  arm.sensitivity = interval_of(arm.sensitivities);
  return arm;
}

}  // namespace

std::optional<double> learning_rate_of(const RunRecord& record) {
  if (const auto lr = record.workload_option_number("lr")) return lr;
  for (const auto& s : split_workload_spec(record.workload).second) {
    if (s.rfind("lr=", 0) != 0) continue;
    char* end = nullptr;
    const double lr = std::strtod(s.c_str() + 3, &end);
    if (end != nullptr && *end == '\0' && std::isfinite(lr) && lr > 0) return lr;
  }
  return std::nullopt;
}

std::string lr_text(double lr) { return format_number(lr, "%.4g"); }

std::vector<LrSweep> lr_sweeps(const std::vector<RunRecord>& records, double alpha) {
  // workload without lr -> arm key -> runs; the arm's label
  std::map<std::string, std::map<std::string, std::vector<Run>>> groups;
  std::map<std::string, std::string> labels;
  for (const auto& r : records) {
    const auto& kind = r.kind;
    if (kind != "baseline" && kind != "fp8") continue;
    const auto lr = learning_rate_of(r);
    if (!lr) continue;
    // "" sorts first: the baseline leads its group.
    // The arm's name: its recipe alone (lr, its axis, is a workload option that run_label adds).
    const std::string key = kind == "baseline" ? ""
                                               : r.recipe_canonical.value_or(recipe_label_of(r));
    labels[key] = kind == "baseline" ? "baseline" : recipe_label_of(r);
    groups[workload_without_lr(r.workload)][key].push_back({*lr, r.seed.value_or(0), &r});
  }
  std::vector<LrSweep> out;
  for (const auto& [workload, arms] : groups) {
    std::set<double> lr_set;
    for (const auto& [key, runs] : arms) {
      for (const auto& run : runs) lr_set.insert(run.lr);
    }
    if (lr_set.size() < kMinLearningRates) continue;
    LrSweep sweep;
    sweep.workload = workload;
    sweep.alpha = alpha;
    sweep.lrs.assign(lr_set.begin(), lr_set.end());
    std::vector<double> ratios;
    for (std::size_t i = 1; i < sweep.lrs.size(); ++i) {
      ratios.push_back(std::log10(sweep.lrs[i] / sweep.lrs[i - 1]));
    }
    sweep.step_decades = median(ratios).value_or(0.0);
    for (const auto& [key, runs] : arms) {
      sweep.arms.push_back(make_arm(labels.at(key), sweep.lrs, sweep.step_decades, runs));
    }
    const LrArm* baseline = sweep.arms.front().label == "baseline" ? &sweep.arms.front() : nullptr;
    for (auto& arm : sweep.arms) {
      if (baseline == nullptr || &arm == baseline) continue;
      const auto shifts = paired(baseline->edges, arm.edges);
      arm.edge_shift = interval_of(shifts);
      if (arm.edge_shift && arm.edge_shift->n >= kMinPairedSeeds) {
        arm.edge_test = named_test(*arm.edge_shift, sweep.step_decades, alpha);
        if (!(arm.edge_shift->sd > 0)) {
          const std::string n = std::to_string(arm.edge_shift->n);
          arm.edge_exact = arm.edge_shift->mean == 0
                               ? "all " + n + " seeds at the same grid point as the baseline"
                               : "the same shift on all " + n + " seeds";
        }
      }
      arm.sensitivity_shift = interval_of(paired(arm.sensitivities, baseline->sensitivities));
    }
    out.push_back(std::move(sweep));
  }
  return out;
}

}  // namespace fp8lab::experiments
