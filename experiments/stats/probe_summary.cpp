#include "experiments/stats/probe_summary.hpp"

#include <algorithm>
#include <numeric>

#include "experiments/stats/batch_means.hpp"

namespace fp8lab::experiments {
namespace {

std::set<std::string> tensors_of(const std::vector<ProbeTrajectory>& trajectories,
                                 const std::string& direction, const std::string& recipe,
                                 const std::string& variant) {
  std::set<std::string> out;
  for (const auto& t : trajectories) {
    for (const auto& row : t.rows) {
      if (row.direction == direction && row.recipe == recipe && row.variant == variant &&
          row.tensor != kWholeModel) {
        out.insert(row.tensor);
      }
    }
  }
  return out;
}

std::optional<std::int64_t> crossing_step(const std::vector<ProbeTrajectory>& trajectories,
                                          const SeriesKey& key) {
  std::optional<std::int64_t> first;
  for (const auto& [point, ratio] : probe_series(trajectories, key, kProbeChmielRatio)) {
    if (ratio < kChmielThreshold && (!first || point.second < *first)) first = point.second;
  }
  return first;
}

}  // namespace

std::optional<MetricSummary> summarize(const ProbeSeries& series) {
  if (series.empty()) return std::nullopt;
  const auto values = series_values(series);
  MetricSummary out;
  out.points = values.size();
  out.interval = batch_means_interval(values);
  out.mean = out.interval ? out.interval->mean
                          : std::accumulate(values.begin(), values.end(), 0.0) /
                                static_cast<double>(values.size());
  return out;
}

const std::vector<const ProbeMetric*>& probe_table_metrics() {
  static const std::vector<const ProbeMetric*> metrics{&kProbeCosine, &kProbeRelError, &kProbeBias,
                                                       &kProbeNoise, &kProbeUpdateError};
  return metrics;
}

std::vector<std::string> probe_recipes(const std::vector<ProbeTrajectory>& trajectories,
                                       const std::string& direction) {
  std::set<std::string> recipes;
  for (const auto& t : trajectories) {
    for (const auto& row : t.rows) {
      if (row.direction == direction) recipes.insert(row.recipe);
    }
  }
  return {recipes.begin(), recipes.end()};
}

std::vector<ProbeRecipeSummary> probe_summaries(const std::vector<ProbeTrajectory>& trajectories,
                                                const std::string& direction) {
  std::vector<ProbeRecipeSummary> out;
  for (const auto& recipe : probe_recipes(trajectories, direction)) {
    ProbeRecipeSummary s;
    s.recipe = recipe;
    const SeriesKey model{direction, recipe, kAllGemms, kWholeModel};
    for (const auto* metric : probe_table_metrics()) {
      s.metrics.push_back(summarize(probe_series(trajectories, model, *metric)));
    }
    s.crossing_step = crossing_step(trajectories, model);
    for (const auto& tensor : tensors_of(trajectories, direction, recipe, kAllGemms)) {
      const auto e = summarize(
          probe_series(trajectories, {direction, recipe, kAllGemms, tensor}, kProbeRelError));
      if (e && (s.worst_tensor.empty() || e->mean > s.worst_rel_error)) {
        s.worst_tensor = tensor;
        s.worst_rel_error = e->mean;
      }
    }
    s.mean_of_draws_bias = summarize(probe_series(trajectories, model, kProbeMeanOfDrawsBias));
    s.draw_spread = summarize(probe_series(trajectories, model, kProbeDrawSpread));
    out.push_back(std::move(s));
  }
  return out;
}

Attribution attribution(const std::vector<ProbeTrajectory>& trajectories, const std::string& recipe,
                        const std::set<std::string>& linear_layers) {
  std::set<std::string> tensors;
  for (const char* variant : kAttributionVariants) {
    tensors.merge(tensors_of(trajectories, kOnBaseline, recipe, variant));
  }
  Attribution out;
  for (const auto& tensor : tensors) {
    const auto dot = tensor.rfind('.');
    const auto layer = dot == std::string::npos ? tensor : tensor.substr(0, dot);
    if (!linear_layers.empty() && !linear_layers.contains(layer)) continue;
    std::array<std::optional<double>, 3> row;
    for (std::size_t g = 0; g < kAttributionVariants.size(); ++g) {
      const auto e = summarize(probe_series(
          trajectories, {kOnBaseline, recipe, kAttributionVariants[g], tensor}, kProbeRelError));
      if (e) row[g] = e->mean;
    }
    out.tensors.push_back(tensor);
    out.values.push_back(row);
  }
  return out;
}

}  // namespace fp8lab::experiments
