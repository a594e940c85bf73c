#include "experiments/stats/seed_plan.hpp"

#include <algorithm>
#include <cmath>

#include "experiments/stats/paired_verdicts.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

// Stein's n for a test of one-sided level alpha whose power at a true mean of 0 is set by the
// quantile `power_quantile` of t with the pilot's degrees of freedom (seed_plan.hpp).
std::size_t stein_seeds(double sd, double band, double alpha, double power_quantile, double df) {
  const double h = student_t_quantile(1 - alpha, df) + student_t_quantile(power_quantile, df);
  const double n = std::ceil(h * h * sd * sd / (band * band));
  // Beyond any budget (kMaxSeedBudget is 10^4): kept finite for the cell.
  return static_cast<std::size_t>(std::min(n, 1e9));
}

}  // namespace

SeedPlan plan_seeds(std::span<const double> pilot, double band, double alpha, std::size_t budget) {
  SeedPlan plan;
  plan.pilot = pilot.size();
  plan.capped = pilot.size();
  const auto interval = t_interval(pilot);
  if (!interval || pilot.size() < kPilotSeedCount) {
    plan.reason = std::to_string(pilot.size()) + " pilot seeds with a paired error; a plan needs " +
                  std::to_string(kPilotSeedCount);
    return plan;
  }
  plan.pilot_sd = interval->sd;
  const double df = static_cast<double>(pilot.size() - 1);
  // TOST's two one-sided tests share the 20% miss: each side may miss 10% (Stein's bound).
  const std::size_t tost = stein_seeds(interval->sd, band, alpha, 1 - (1 - kTargetPower) / 2, df);
  const std::size_t upper = stein_seeds(interval->sd, band, alpha, kTargetPower, df);
  const bool tost_fits = tost <= budget;
  plan.test = tost_fits ? "TOST" : "non-inferiority";
  plan.planned = std::max(pilot.size(), tost_fits ? tost : upper);
  plan.capped = std::min(*plan.planned, std::max(budget, pilot.size()));
  return plan;
}

SeedPlan plan_row_seeds(const std::vector<const RunRecord*>& pilot, double band, double alpha,
                        std::size_t budget) {
  std::vector<double> errors;
  for (const auto* record : pilot) {
    const auto error = *record->status == "finished" ? tail_rel_error(*record) : std::nullopt;
    if (!error) {
      SeedPlan plan;
      plan.pilot = pilot.size();
      plan.capped = pilot.size();
      plan.reason = "pilot seed " + std::to_string(*record->seed) + " is " + *record->status +
                    (*record->status == "finished" ? " without a paired error" : "") +
                    ": more seeds cannot change its verdict";
      return plan;
    }
    errors.push_back(*error);
  }
  return plan_seeds(errors, band, alpha, budget);
}

std::string describe_seed_plan(const SeedPlan& plan, std::size_t budget) {
  const std::string runs = "; runs " + std::to_string(plan.capped) + " (seed_budget " +
                           std::to_string(budget) + ")";
  if (!plan.planned) return "not planned: " + plan.reason + runs;
  return plan.test + " needs " + std::to_string(*plan.planned) +
         " seeds for 80% power at the pilot's sd " + format_percent(plan.pilot_sd) + runs;
}

std::string seed_plan_cell(const SeedPlan& plan, std::size_t seeds_run) {
  return (plan.planned ? std::to_string(*plan.planned) : std::string("-")) + "/" +
         std::to_string(seeds_run);
}

std::optional<MeanInterval> two_stage_interval(std::span<const double> all,
                                               std::span<const double> pilot) {
  const auto spread = t_interval(pilot);
  if (!spread || all.empty()) return std::nullopt;
  MeanInterval out;
  out.n = all.size();
  double sum = 0;
  for (const double v : all) sum += v;
  out.mean = sum / static_cast<double>(out.n);
  out.sd = spread->sd;
  out.sd_n = pilot.size();
  out.half_width = out.half_width_at(0.95);
  return out;
}

}  // namespace fp8lab::experiments
