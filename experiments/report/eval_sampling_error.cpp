#include "experiments/report/eval_sampling_error.hpp"

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

bool finished(const nlohmann::json& r) { return r.value("status", std::string()) == "finished"; }

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

std::vector<double> eval_example_losses(const nlohmann::json& record) {
  std::vector<double> out;
  const nlohmann::json::json_pointer p("/final/eval_example_losses");
  if (!record.contains(p) || !record[p].is_array()) return out;
  for (const auto& v : record[p]) {
    if (!v.is_number()) return {};
    out.push_back(v.get<double>());
  }
  return out;
}

std::optional<EvalSamplingError> eval_sampling_error(const nlohmann::json& run,
                                                     const nlohmann::json& baseline) {
  if (!finished(run) || !finished(baseline)) return std::nullopt;
  // Both last evals must come from the same step (the same length of training).
  if (run.value("steps_completed", nlohmann::json()) !=
      baseline.value("steps_completed", nlohmann::json())) {
    return std::nullopt;
  }
  const auto a = eval_example_losses(run);
  const auto b = eval_example_losses(baseline);
  return window_sampling_error(a, b);
}

}  // namespace fp8lab::experiments
