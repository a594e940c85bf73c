#include "experiments/stats/eval_sampling_error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace fp8lab::experiments {
namespace {

// Sample standard deviation (n - 1) of values with their mean.
double sample_sd(std::span<const double> values, double mean) {
  double sum = 0;
  for (const double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double mean_of(std::span<const double> values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

bool finished(const RunRecord& r) { return *r.status == "finished"; }

}  // namespace

std::optional<EvalSamplingError> window_sampling_error(std::span<const double> run,
                                                       std::span<const double> baseline) {
  if (run.size() != baseline.size() || run.size() < 2) return std::nullopt;
  std::vector<double> differences(run.size());
  for (std::size_t i = 0; i < run.size(); ++i) {
    if (!std::isfinite(run[i]) || !std::isfinite(baseline[i])) return std::nullopt;
    differences[i] = run[i] - baseline[i];
  }
  const double base_mean = mean_of(baseline);
  if (!(base_mean > 0)) return std::nullopt;
  const double root_n = std::sqrt(static_cast<double>(run.size()));
  EvalSamplingError out;
  out.windows = run.size();
  out.paired = sample_sd(differences, mean_of(differences)) / root_n / base_mean;
  out.unpaired = sample_sd(baseline, base_mean) / root_n / base_mean;
  return out;
}

std::vector<double> eval_example_losses(const RunRecord& record) {
  if (!record.final.has_value()) return {};
  const auto& losses = record.final->eval_example_losses;
  // A loss the record holds as null (not finite) makes the whole list unusable.
  if (!losses.has_value() ||
      std::any_of(losses->begin(), losses->end(), [](double v) { return std::isnan(v); })) {
    return {};
  }
  return *losses;
}

std::optional<EvalSamplingError> eval_sampling_error(const RunRecord& run,
                                                     const RunRecord& baseline) {
  if (!finished(run) || !finished(baseline)) return std::nullopt;
  // Both last evals must come from the same step (the same length of training).
  if (run.steps_completed.get() != baseline.steps_completed.get()) {
    return std::nullopt;
  }
  const auto a = eval_example_losses(run);
  const auto b = eval_example_losses(baseline);
  return window_sampling_error(a, b);
}

}  // namespace fp8lab::experiments
