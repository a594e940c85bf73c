// Recipes against each other on the baseline's trajectory (issue 41 item 3): per pair and metric,
// the paired difference at each probe step both recipes were probed at (the same weights and
// batch: no seed chaos in it), its mean with the batch-means interval (batch_means.hpp), the
// two-sided test of mean = 0 (difference_test, named_tests.hpp) and Holm over the family of every
// pair and metric of the table. No LibTorch.
//
// Metrics: the whole model's relative gradient error, the size of its bias part |bias| and the
// update's relative error; for each, lower is better, so d = a - b > 0 reads "a worse than b".
// A direction is stated only when the test holds after Holm; otherwise the pair is inconclusive
// and the Holm note says why (named_tests.hpp's words).
#pragma once

#include <string>
#include <vector>

#include "experiments/stats/named_tests.hpp"
#include "experiments/stats/probe_series.hpp"

namespace fp8lab::experiments {

inline constexpr const char* kProbeFamily = "probe pairs";

struct ProbePair {
  std::string metric;  // ProbeMetric::name
  std::string a, b;    // recipes, a < b by name; d = a - b
  std::size_t steps = 0;
  NamedTest test;  // family kProbeFamily, p_holm set
  // The word the table shows: the test's verdict when it holds after Holm, else "inconclusive".
  std::string shown() const;
};

const std::vector<const ProbeMetric*>& probe_pair_metrics();

// Every pair of on_baseline recipes with at least 6 common probe points (a batch-means interval),
// per metric of probe_pair_metrics(), Holm-adjusted over all of them together.
std::vector<ProbePair> probe_pairs(const std::vector<ProbeTrajectory>& trajectories, double alpha);

}  // namespace fp8lab::experiments
