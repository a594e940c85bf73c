#include "experiments/stats/probe_pairs.hpp"

#include "experiments/stats/batch_means.hpp"
#include "experiments/stats/probe_summary.hpp"

namespace fp8lab::experiments {

std::string ProbePair::shown() const {
  return test.holds_after_holm() ? test.verdict : std::string("inconclusive");
}

const std::vector<const ProbeMetric*>& probe_pair_metrics() {
  static const std::vector<const ProbeMetric*> metrics{&kProbeRelError, &kProbeAbsBias,
                                                       &kProbeUpdateError};
  return metrics;
}

std::vector<ProbePair> probe_pairs(const std::vector<ProbeTrajectory>& trajectories, double alpha) {
  const auto recipes = probe_recipes(trajectories, kOnBaseline);
  std::vector<ProbePair> out;
  for (const auto* metric : probe_pair_metrics()) {
    std::vector<ProbeSeries> series;
    for (const auto& r : recipes) {
      series.push_back(
          probe_series(trajectories, {kOnBaseline, r, kAllGemms, kWholeModel}, *metric));
    }
    for (std::size_t i = 0; i < recipes.size(); ++i) {
      for (std::size_t j = i + 1; j < recipes.size(); ++j) {
        std::vector<double> differences;  // in (trajectory, step) order, as the maps iterate
        for (const auto& [point, value] : series[i]) {
          if (const auto other = series[j].find(point); other != series[j].end()) {
            differences.push_back(value - other->second);
          }
        }
        const auto interval = batch_means_interval(differences);
        if (!interval) continue;
        out.push_back({metric->name, recipes[i], recipes[j], differences.size(),
                       difference_test(*interval, alpha)});
      }
    }
  }
  std::vector<double> p;
  for (const auto& pair : out) p.push_back(pair.test.p_raw);
  const auto holm = holm_adjusted(p);
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].test.family = kProbeFamily;
    out[k].test.family_size = out.size();
    out[k].test.p_holm = holm[k];
  }
  return out;
}

}  // namespace fp8lab::experiments
