// How much of a paired error is the eval set's own sampling (issue 20 §2): the standard error of
// the eval loss as an estimate over its windows, unpaired and paired. No LibTorch.
//
// Unpaired: sd(l_i) / sqrt(N) / mean(l) over the baseline's N eval windows: the error of one eval
// loss as an estimate of the loss on such text (0.61% on llama-xs at 256 windows,
// docs/workloads.md), larger than the 0.25% band at any eval set this corpus holds.
// Paired: the FP8 (or null) run and its baseline on the same seed evaluate the same windows, so
// their difference on window i, d_i = l_i(run) - l_i(baseline), cancels what makes one window
// harder than another; sd(d_i) / sqrt(N) / mean(l(baseline)) is the sampling error of the paired
// relative error d_s itself, the statistic the verdicts average over seeds. It bounds how small an
// effect one seed can show; the seed-to-seed spread of d_s (the t-interval) includes it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

struct EvalSamplingError {
  std::size_t windows = 0;
  double paired = 0;    // relative: sd(run - baseline) / sqrt(N) / mean(baseline)
  double unpaired = 0;  // relative: sd(baseline) / sqrt(N) / mean(baseline)
};

// From per-window losses in the same window order; nullopt unless both have the same N >= 2
// finite values and the baseline's mean is positive.
std::optional<EvalSamplingError> window_sampling_error(std::span<const double> run,
                                                       std::span<const double> baseline);

// From the records' /final/eval_example_losses (docs/results-schema.md); nullopt when either
// lacks them, a run did not finish, or they ended at different steps.
std::optional<EvalSamplingError> eval_sampling_error(const RunRecord& run,
                                                     const RunRecord& baseline);

// The per-window losses of a record's last eval, empty without them.
std::vector<double> eval_example_losses(const RunRecord& record);

}  // namespace fp8lab::experiments
