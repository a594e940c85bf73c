// The statistics of paired verdicts (issue 20 §2): a mean over seeds with its 95% Student-t
// interval, and what it says against a practical band. Pure arithmetic, no JSON, no LibTorch.
//
// Why paired and why t: an FP8 run and its baseline on seed s share initialization and data
// order, so d_s = (loss_fp8 - loss_baseline) / loss_baseline removes everything the two runs
// share; the d_s of different seeds are independent, and with few seeds (3-10) the t-interval is
// the textbook interval for their mean (a bootstrap needs more seeds to mean anything).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace fp8lab::experiments {

// A verdict needs an interval, and an interval needs a standard deviation from >= 2 values; the
// issue asks for at least 3 seeds so that the interval is not the df = 1 one (t = 12.7).
inline constexpr std::size_t kMinPairedSeeds = 3;
// DeepSeek-V3 (arXiv 2412.19437 §3.3): FP8 training's relative loss error vs BF16 "consistently
// remains below 0.25%". The default practical band; a sweep's `practical_band` key overrides it.
inline constexpr double kDefaultPracticalBand = 0.0025;

// The 0.975 quantile of Student's t with `df` >= 1 degrees of freedom (two-sided 95%).
double student_t_975(std::size_t df);

struct MeanInterval {
  std::size_t n = 0;
  double mean = 0;
  double sd = 0;          // sample standard deviation (n - 1)
  double half_width = 0;  // t_975(n - 1) * sd / sqrt(n)
  double low() const { return mean - half_width; }
  double high() const { return mean + half_width; }
};

// The mean of the values with its 95% t-interval; nullopt for fewer than 2 values.
std::optional<MeanInterval> t_interval(std::span<const double> values);

enum class BandVerdict { kDegrades, kWithinBand, kInconclusive };
const char* to_string(BandVerdict verdict);  // "degrades", "within band", "inconclusive"

// The interval against the band b (a positive fraction; d > 0 means the FP8 run's loss is higher):
//   degrades      low > b        (worse than the band, with 95% confidence)
//   within band   high <= b      (not worse than the band; an interval below -b, a recipe
//                                 reliably better than its baseline, is also within band)
//   inconclusive  low <= b < high
BandVerdict judge(const MeanInterval& interval, double band);

// About how many seeds in all would settle an inconclusive interval, if the mean and sd stayed as
// measured: the smallest n with t_975(n - 1) * sd / sqrt(n) < |mean - band|. nullopt when no
// count would (the mean lies on the band) or it exceeds `cap`.
std::optional<std::size_t> seeds_to_settle(const MeanInterval& interval, double band,
                                           std::size_t cap = 100000);

// The smallest paired effect n seeds with this spread can call `degrades`: a mean above
// band + t_975(n - 1) * sd / sqrt(n).
double smallest_resolvable_effect(std::size_t n, double sd, double band);

// "+0.52% [+0.31%, +0.73%] (n=3)": the mean and its interval, signed percentages.
std::string describe_interval(const MeanInterval& interval);
// "+0.52%" with its sign (format_percent drops none but never adds '+').
std::string signed_percent(double fraction);

}  // namespace fp8lab::experiments
