#include "experiments/stats/rank_prediction.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double average = (static_cast<double>(i + j) / 2) + 1;
    for (std::size_t k = i; k <= j; ++k) out[order[k]] = average;
    i = j + 1;
  }
  return out;
}

// The q-quantile of sorted values (linear interpolation between order statistics).
double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

}  // namespace

std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("spearman: x and y differ in length");
  if (x.size() < 2) return std::nullopt;
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n;
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (!(sxx > 0) || !(syy > 0)) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

RankPrediction rank_prediction(const std::vector<double>& probe_error,
                               const std::vector<double>& loss_error) {
  RankPrediction out;
  out.recipes = probe_error.size();
  out.rho = spearman(probe_error, loss_error);
  const std::string count = std::to_string(out.recipes) + " recipes";
  if (out.recipes < kMinPredictionRecipes || !out.rho) {
    out.sentence = "Cannot tell: " + count + " have both a probe error and a paired loss error";
    out.sentence += out.recipes < kMinPredictionRecipes
                        ? "; a rank correlation needs at least " +
                              std::to_string(kMinPredictionRecipes) + "."
                        : ", and one of the two ranks them all equal.";
    return out;
  }
  std::mt19937_64 generator(kPredictionSeed);
  std::uniform_int_distribution<std::size_t> pick(0, out.recipes - 1);
  std::vector<double> rhos, x(out.recipes), y(out.recipes);
  for (std::size_t r = 0; r < kPredictionResamples; ++r) {
    for (std::size_t i = 0; i < out.recipes; ++i) {
      const std::size_t k = pick(generator);
      x[i] = probe_error[k];
      y[i] = loss_error[k];
    }
    if (const auto rho = spearman(x, y)) rhos.push_back(*rho);
  }
  std::sort(rhos.begin(), rhos.end());
  out.resamples_used = rhos.size();
  out.ci_low = quantile(rhos, 0.025);
  out.ci_high = quantile(rhos, 0.975);
  out.can_tell = out.ci_low > 0 || out.ci_high < 0;
  const std::string figures = "Spearman rho " + format_number(*out.rho, "%.2f") +
                              ", 95% bootstrap interval [" + format_number(out.ci_low, "%.2f") +
                              ", " + format_number(out.ci_high, "%.2f") + "] (" + count + ", " +
                              std::to_string(out.resamples_used) + " resamples)";
  if (!out.can_tell) {
    out.sentence = "Cannot tell: " + figures + "; the interval contains 0.";
  } else {
    out.sentence = std::string("Across these recipes, a larger probe error went with a ") +
                   (out.ci_low > 0 ? "larger" : "smaller") + " end-of-run loss error: " + figures +
                   ".";
  }
  return out;
}

}  // namespace fp8lab::experiments
