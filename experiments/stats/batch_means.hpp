// The mean of a metric over one trajectory's probe steps with an interval that respects the
// steps' autocorrelation: non-overlapping batch means. No LibTorch.
//
// Why batch means and not a moving block bootstrap: both need a block long against the series'
// autocorrelation time, but batch means gives a closed-form Student-t interval whose p-value and
// power come from the same code as every other named test (a MeanInterval over the batches,
// named_tests.hpp), needs no random numbers (a report's figures do not depend on a seed) and is
// cheap enough for every metric and pair of recipes.
//
// How: the series (in step order) is cut into b = min(kBatches, floor(n / 2)) contiguous batches
// of m = floor(n / b) points; the n - b m earliest points are dropped (the remainder falls at the
// start, the end of training is kept). The interval is the Student-t interval of the b batch
// means (t with b - 1 degrees of freedom): a MeanInterval whose n is b. Ten batches (Schmeiser
// 1982 recommends 10 to 30) keep each batch as long as possible, which is what the interval's
// coverage depends on; t_(b-1) pays for estimating the spread from ten values.
//
// Measured (tests/experiments/probe_statistics_test.cpp): on AR(1) series with phi 0.8
// (autocorrelation time (1 + phi) / (1 - phi) = 9 steps) of 1000 points, the 95% interval covers
// the true mean at close to 95% (94.75% of 2000), an iid interval at about half (51.5%). With
// batches not much longer than the autocorrelation time it is too narrow: a re-simulation of the
// same rule (numpy, 4000 AR(1) replicates, not a test) covered 94.6% / 89% / 68% at 30 points and
// phi 0 / 0.5 / 0.8, and 88% / 94% at 100 / 300 points and phi 0.8. A trajectory of 30 probe
// steps whose metric drifts slowly gets an interval narrower than it says.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "experiments/stats/paired_statistics.hpp"

namespace fp8lab::experiments {

inline constexpr std::size_t kBatches = 10;

// The batch-means interval of `series` (in step order); nullopt for fewer than 6 points (3
// batches of 2, the fewest the t interval is given for, as for seeds: kMinPairedSeeds).
std::optional<MeanInterval> batch_means_interval(std::span<const double> series);

}  // namespace fp8lab::experiments
