#include "experiments/stats/probe_series.hpp"

#include <cmath>

namespace fp8lab::experiments {

const ProbeMetric kProbeCosine{"gradient cosine", [](const ProbeRow& r) { return r.cosine; }};
const ProbeMetric kProbeRelError{"relative error", [](const ProbeRow& r) { return r.rel_error; }};
const ProbeMetric kProbeBias{"bias part", [](const ProbeRow& r) { return r.bias; }};
// The size of the systematic part, whichever its sign: the pairwise comparisons' bias.
const ProbeMetric kProbeAbsBias{"|bias part|", [](const ProbeRow& r) { return std::fabs(r.bias); }};
const ProbeMetric kProbeNoise{"noise part", [](const ProbeRow& r) { return r.noise; }};
const ProbeMetric kProbeUpdateError{"update error",
                                    [](const ProbeRow& r) { return r.update_rel_error; }};
const ProbeMetric kProbeChmielRatio{"Chmiel ratio",
                                    [](const ProbeRow& r) { return r.chmiel_ratio; }};
const ProbeMetric kProbeMeanOfDrawsBias{"mean-of-draws bias",
                                        [](const ProbeRow& r) { return r.bias; }, true};
const ProbeMetric kProbeDrawSpread{"draw spread", [](const ProbeRow& r) { return r.draw_spread; },
                                   true};

ProbeSeries probe_series(const std::vector<ProbeTrajectory>& trajectories, const SeriesKey& key,
                         const ProbeMetric& metric) {
  ProbeSeries sums;
  std::map<std::pair<std::size_t, std::int64_t>, int> counts;
  for (std::size_t t = 0; t < trajectories.size(); ++t) {
    for (const auto& row : trajectories[t].rows) {
      if (row.direction != key.direction || row.recipe != key.recipe ||
          row.variant != key.variant || row.tensor != key.tensor) {
        continue;
      }
      if ((row.draw == kMeanOfDraws) != metric.mean_of_draws) continue;
      const std::pair point{t, row.step};
      sums[point] += metric.value(row);
      ++counts[point];
    }
  }
  for (auto& [point, sum] : sums) sum /= counts[point];
  return sums;
}

std::vector<double> series_values(const ProbeSeries& series) {
  std::vector<double> out;
  out.reserve(series.size());
  for (const auto& [point, value] : series) out.push_back(value);
  return out;
}

}  // namespace fp8lab::experiments
