// "Does it predict?" (issue 41 item 4): the Spearman rank correlation between each recipe's probe
// error and its paired end-of-run loss error, with a bootstrap interval over recipes, and a plain
// sentence that says when it cannot tell. No LibTorch.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab::experiments {

// Fewer recipes than this: the report says it cannot tell whatever rho is.
inline constexpr std::size_t kMinPredictionRecipes = 5;
inline constexpr std::size_t kPredictionResamples = 2000;
// Fixed, so that a report's interval is the same every time it is written.
inline constexpr unsigned kPredictionSeed = 41;

struct RankPrediction {
  std::size_t recipes = 0;
  std::optional<double> rho;       // nullopt: fewer than 2 recipes, or one side all tied
  double ci_low = 0, ci_high = 0;  // the 95% percentile interval of the resampled rho
  std::size_t resamples_used = 0;  // resamples whose rho is defined (others are skipped)
  bool can_tell = false;           // >= kMinPredictionRecipes and the interval excludes 0
  std::string sentence;
};

// Spearman's rho of x and y (average ranks for ties: Pearson's r of the ranks); nullopt for fewer
// than 2 pairs or when either side's ranks are all equal.
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y);

// rho of (probe_error[i], loss_error[i]) over recipes i, its interval (recipes resampled with
// replacement, kPredictionResamples times, std::mt19937_64 seeded kPredictionSeed) and the
// sentence.
RankPrediction rank_prediction(const std::vector<double>& probe_error,
                               const std::vector<double>& loss_error);

}  // namespace fp8lab::experiments
