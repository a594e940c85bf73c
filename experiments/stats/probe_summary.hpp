// Per recipe, the probes' figures over one direction's trajectories (issue 41 item 3): each
// metric's mean over probe steps with its batch-means interval (batch_means.hpp), the step at
// which the whole model's Chmiel ratio first falls below sqrt(3), the tensor with the highest mean
// relative error, a stochastic recipe's mean-of-draws bias and draw spread, and the per-GEMM
// attribution. No LibTorch.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiments/stats/paired_statistics.hpp"
#include "experiments/stats/probe_series.hpp"

namespace fp8lab::experiments {

// The threshold of Chmiel et al. 2025 (docs/results-schema.md, "Probe sidecar": whose ratio).
inline const double kChmielThreshold = 1.7320508075688772;  // sqrt(3)

// A metric's mean over a series: with its batch-means interval where the series has >= 6 points
// (the interval's mean, over the batches), else the plain mean of its points.
struct MetricSummary {
  double mean = 0;
  std::size_t points = 0;
  std::optional<MeanInterval> interval;
};
std::optional<MetricSummary> summarize(const ProbeSeries& series);

// The table's metrics, in column order: cosine, relative error, bias, noise, update error.
const std::vector<const ProbeMetric*>& probe_table_metrics();

struct ProbeRecipeSummary {
  std::string recipe;
  std::vector<std::optional<MetricSummary>> metrics;  // probe_table_metrics()'s order
  // The first probe step whose whole-model Chmiel ratio is below sqrt(3) (the earliest over the
  // trajectories); nullopt: never.
  std::optional<std::int64_t> crossing_step;
  std::string worst_tensor;  // "" without per-tensor rows
  double worst_rel_error = 0;
  // Stochastic recipes only (rows of draw -1): the mean gradient's bias and the draws' spread.
  std::optional<MetricSummary> mean_of_draws_bias, draw_spread;
};

// Every recipe of `direction`'s rows, in name order.
std::vector<std::string> probe_recipes(const std::vector<ProbeTrajectory>& trajectories,
                                       const std::string& direction);
std::vector<ProbeRecipeSummary> probe_summaries(const std::vector<ProbeTrajectory>& trajectories,
                                                const std::string& direction);

// The per-GEMM attribution of one recipe on the baseline's trajectory: for each tensor of
// `tensors` that has attribution rows, the mean relative error of its gradient with only fprop,
// only dgrad, only wgrad quantized.
struct Attribution {
  std::vector<std::string> tensors;
  std::vector<std::array<std::optional<double>, 3>> values;  // [tensor][fprop, dgrad, wgrad]
};
inline constexpr std::array<const char*, 3> kAttributionVariants{kFpropOnly, kDgradOnly,
                                                                 kWgradOnly};
// `linear_layers`: the Linears' names (a tensor belongs to one when its name less the last
// ".part" is one); empty: every tensor.
Attribution attribution(const std::vector<ProbeTrajectory>& trajectories, const std::string& recipe,
                        const std::set<std::string>& linear_layers);

}  // namespace fp8lab::experiments
