// One metric of the probe sidecars as a series over probe steps, the unit every probe statistic
// works on (probe_summary.hpp, probe_pairs.hpp). No LibTorch.
//
// A series belongs to one direction, recipe, variant and tensor. Its points are keyed by
// (trajectory, step): a trajectory is one run's sidecar (a baseline for on_baseline rows, a trained
// run for exact_on_run rows), so several seeds' trajectories follow one another in run order.
// A stochastic recipe's point at a step is the mean of the metric over its draws 0..K-1 (what one
// training step would see, on average); its mean-of-draws rows (draw -1) are read only where a
// metric says so (ProbeMetric::mean_of_draws).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "experiments/results/probe_sidecar.hpp"

namespace fp8lab::experiments {

// One run's sidecar rows.
struct ProbeTrajectory {
  std::string run_id;
  std::vector<ProbeRow> rows;
};

struct ProbeMetric {
  const char* name;  // as the tables head it
  double (*value)(const ProbeRow&);
  bool mean_of_draws = false;  // read the draw -1 rows instead of averaging the draws
};

// The table's metrics, in its column order, and the two of a stochastic recipe's draws.
extern const ProbeMetric kProbeCosine, kProbeRelError, kProbeBias, kProbeAbsBias, kProbeNoise,
    kProbeUpdateError, kProbeChmielRatio, kProbeMeanOfDrawsBias, kProbeDrawSpread;

// (trajectory index, step) -> value.
using ProbeSeries = std::map<std::pair<std::size_t, std::int64_t>, double>;

struct SeriesKey {
  std::string direction, recipe, variant, tensor;
};

ProbeSeries probe_series(const std::vector<ProbeTrajectory>& trajectories, const SeriesKey& key,
                         const ProbeMetric& metric);

// The values of a series in (trajectory, step) order.
std::vector<double> series_values(const ProbeSeries& series);

}  // namespace fp8lab::experiments
