// The statistics of paired verdicts (issue 20 §2, issue 31 §3-4): a mean over seeds with its
// Student-t interval, the power of the t-test at a given effect, and the distributions behind
// both, from Boost.Math (no hand tables). Pure arithmetic, no JSON, no LibTorch.
//
// Why paired and why t: an FP8 run and its baseline on seed s share initialization and data
// order, so d_s = (loss_fp8 - loss_baseline) / loss_baseline removes everything the two runs
// share; the d_s of different seeds are independent, and with few seeds (3-10) the t-interval is
// the textbook interval for their mean (a bootstrap needs more seeds to mean anything).
#pragma once

#include <cstddef>
#include <functional>
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
// The default significance level of every named test (a sweep's `hypotheses: {alpha: ...}`).
inline constexpr double kDefaultAlpha = 0.05;
// The power that mde80 and seeds_for_80 are computed at.
inline constexpr double kTargetPower = 0.80;

// Student's t with `df` >= 1 degrees of freedom (Boost.Math): the p-quantile, and the upper tail
// P(T > t).
double student_t_quantile(double p, double df);
double student_t_upper_tail(double t, double df);

struct MeanInterval {
  std::size_t n = 0;
  double mean = 0;
  double sd = 0;          // sample standard deviation (n - 1)
  double half_width = 0;  // the 95% two-sided interval's: t_0.975(df) * sd / sqrt(n)
  // The values the sd comes from; 0: all n. A planned row's two-stage test (seed_plan.hpp) takes
  // its sd from the pilot only, so its t has the pilot's degrees of freedom.
  std::size_t sd_n = 0;
  double degrees_of_freedom() const;
  double low() const { return mean - half_width; }
  double high() const { return mean + half_width; }
  double standard_error() const;
  // The half-width of the two-sided interval at `level` (0.90 for the TOST interval at
  // alpha 0.05): t_((1 + level) / 2)(df) * sd / sqrt(n).
  double half_width_at(double level) const;
};

// The mean of the values with its 95% t-interval; nullopt for fewer than 2 values.
std::optional<MeanInterval> t_interval(std::span<const double> values);

// The power of the two-sided one-sample t-test of "mean = 0" at `alpha`, for n values of
// standard deviation `sd` whose true mean is `effect`: the exact power from the noncentral t
// distribution (df = n - 1, noncentrality effect * sqrt(n) / sd; Boost.Math non_central_t),
//   P(T' > t_(1 - alpha/2)) + P(T' < -t_(1 - alpha/2)).
double t_test_power(double effect, double sd, std::size_t n, double alpha);

// mde80: the smallest |effect| that the two-sided t-test at `alpha` detects with 80% power with n
// values of spread `sd` (bisection on t_test_power). INFINITY for n < 2, 0 for sd 0.
double minimum_detectable_effect(std::size_t n, double sd, double alpha);

// The power of the one-sided (non-inferiority) t-test of "mean >= +band" at `alpha` for a true
// mean `effect`: P(T' > t_(1 - alpha)), T' noncentral t with df n - 1 and noncentrality
// (band - effect) sqrt(n) / sd.
double non_inferiority_power(double effect, double band, double sd, std::size_t n, double alpha);

// The power of TOST at `alpha` (both one-sided t-tests, of "mean <= -band" and of "mean >=
// +band", reject) for a true mean `effect`: exact, integrating over the sample sd. With
// u = s / sd (sqrt(chi2_(n-1) / (n - 1))), Z the standardized sample mean, d1 = (band + effect)
// sqrt(n) / sd, d2 = (band - effect) sqrt(n) / sd and c = t_(1 - alpha)(n - 1), both reject iff
// c u - d1 < Z < d2 - c u: power = E_u[max(0, Phi(d2 - c u) - Phi(c u - d1))] (Gauss-Kronrod).
double tost_power(double effect, double band, double sd, std::size_t n, double alpha);

// The smallest n >= 2 at which `power(n)` reaches 80% (power rising with n: doubling, then
// bisection); nullopt when none up to `cap` does.
std::optional<std::size_t> seeds_for_power(const std::function<double(std::size_t)>& power,
                                           std::size_t cap = 100000);
// The same for the two-sided t-test of "mean = 0" at `alpha`, a true mean `effect` with spread
// `sd`; nullopt for an effect of 0.
std::optional<std::size_t> seeds_for_power(double effect, double sd, double alpha,
                                           std::size_t cap = 100000);

// "+0.52% [+0.31%, +0.73%] (n=3)": the mean and its 95% interval, signed percentages.
std::string describe_interval(const MeanInterval& interval);
// "+0.52%" with its sign (format_percent drops none but never adds '+').
std::string signed_percent(double fraction);

}  // namespace fp8lab::experiments
