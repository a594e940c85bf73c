#include "experiments/stats/paired_verdicts.hpp"

#include <algorithm>
#include <cmath>

#include "experiments/stats/analysis.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/report_data.hpp"
#include "experiments/stats/seed_plan.hpp"

namespace fp8lab::experiments {
namespace {

// The eval rows' values of `field` that are finite numbers, in step order as recorded.
std::vector<double> eval_values(const RunRecord& record, Field<double> EvalRow::*field) {
  std::vector<double> values;
  for (const auto& row : *record.eval) {
    if (auto v = (row.*field).get(); v && std::isfinite(*v)) values.push_back(*v);
  }
  return values;
}

std::optional<double> tail_mean(const std::vector<double>& values) {
  const std::size_t count = tail_points(values.size());
  if (count == 0) return std::nullopt;
  double sum = 0;
  for (std::size_t i = values.size() - count; i < values.size(); ++i) sum += values[i];
  return sum / static_cast<double>(count);
}

bool finished(const RunRecord& r) { return *r.status == "finished"; }

std::string count_text(std::size_t k, std::size_t n, const char* what) {
  return std::to_string(k) + " of " + std::to_string(n) + " seed" + (n == 1 ? "" : "s") + " " +
         what;
}

}  // namespace

std::optional<double> final_rel_error(const RunRecord& record) {
  if (auto v = record.final->eval_rel_diff.get()) return v;
  const auto values = eval_values(record, &EvalRow::rel_diff);
  if (values.empty()) return std::nullopt;
  return values.back();
}

std::optional<double> tail_rel_error(const RunRecord& record) {
  return tail_mean(eval_values(record, &EvalRow::rel_diff));
}

std::optional<double> tail_eval_loss(const RunRecord& record) {
  return tail_mean(eval_values(record, &EvalRow::loss));
}

std::optional<double> eval_loss_standard_error(const RunRecord& record) {
  return record.final->eval_loss_se.get();
}

PairedVerdict paired_verdict(const std::vector<const RunRecord*>& seeds, double band, double alpha,
                             const std::vector<std::int64_t>& pilot_seeds) {
  PairedVerdict out;
  std::size_t diverged = 0, unstable = 0, threw = 0;
  std::vector<double> tails, finals, ratios, pilot_tails;
  for (const auto* r : seeds) {
    const auto& status = *r->status;
    if (status == "diverged") ++diverged;
    if (status == "unstable") ++unstable;
    if (status == "failed") ++threw;
    if (!finished(*r)) continue;
    if (auto ratio = improvement_ratio(*r)) ratios.push_back(*ratio);
    const auto tail = tail_rel_error(*r);
    const auto final = final_rel_error(*r);
    if (!tail || !final) continue;
    tails.push_back(*tail);
    finals.push_back(*final);
    if (std::find(pilot_seeds.begin(), pilot_seeds.end(), *r->seed) != pilot_seeds.end()) {
      pilot_tails.push_back(*tail);
    }
  }
  out.finished = tails.size();
  const bool two_stage = !pilot_seeds.empty() && pilot_tails.size() == pilot_seeds.size();
  out.tail = two_stage ? two_stage_interval(tails, pilot_tails) : t_interval(tails);
  out.final = t_interval(finals);
  const std::size_t n = seeds.size();
  if (diverged > 0) {
    out.verdict = "diverged";
    out.reason = count_text(diverged, n, "diverged");
    return out;
  }
  if (unstable > 0) {
    out.verdict = "unstable";
    out.reason = count_text(unstable, n, "unstable") + " (the sweep's instability rule)";
    return out;
  }
  if (threw > 0) {
    out.verdict = "failed";
    out.reason = count_text(threw, n, "threw");
    return out;
  }
  if (auto ratio = median(ratios); ratio && *ratio < kFailedToTrainImprovement) {
    out.verdict = "failed";
    out.reason = "did not train: its eval loss fell " + format_percent(*ratio) +
                 " of the baseline's fall (median of its seeds)";
    return out;
  }
  if (out.finished < kMinPairedSeeds || !out.tail) {
    out.verdict = "inconclusive";
    out.reason = std::to_string(out.finished) + " seed" + (out.finished == 1 ? "" : "s") +
                 " with a paired error; a test needs " + std::to_string(kMinPairedSeeds);
    return out;
  }
  out.test = named_test(*out.tail, band, alpha);
  out.verdict = out.test->verdict;
  if (out.verdict == "inconclusive") out.reason = power_reason(*out.test);
  return out;
}

std::string power_reason(const NamedTest& test) {
  const std::string what = "80% power for its settling test (" + test.power_test +
                           ") at a mean of " + signed_percent(test.estimate) + " and this spread";
  if (!test.seeds_for_80) return "no count of seeds up to 100000 gives " + what;
  return what + " needs " + std::to_string(*test.seeds_for_80) + " seeds";
}

std::string paired_verdict_rules() {
  return "Verdicts are paired: per seed, the relative eval-loss error of the recipe against its "
         "baseline on the same seed (same initialization and data order), as the mean over the "
         "last 10% of eval points (the final point is shown too); over seeds, the named test of "
         "its mean below. \"failed\" = a seed threw or the run did not train (its eval loss fell "
         "by less than half of the baseline's fall); \"diverged\" = a seed's loss became "
         "non-finite; \"unstable\" = a seed met the sweep's pre-registered instability rule "
         "(its run stopped there); fewer than 3 finished seeds are \"inconclusive\" without a "
         "test.";
}

}  // namespace fp8lab::experiments
