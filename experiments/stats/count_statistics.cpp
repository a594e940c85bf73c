#include "experiments/stats/count_statistics.hpp"

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/hypergeometric.hpp>

#include <algorithm>

namespace fp8lab::experiments {
namespace {

using boost::math::binomial_distribution;
using boost::math::hypergeometric_distribution;

// X = successes in arm 1 given both margins: population n1 + n2, a + b successes, n1 drawn.
hypergeometric_distribution<double> table_distribution(std::size_t a, std::size_t n1, std::size_t b,
                                                       std::size_t n2) {
  // Boost takes unsigned counts; seeds and runs are far below 2^32.
  return hypergeometric_distribution<double>(
      static_cast<unsigned>(a + b), static_cast<unsigned>(n1), static_cast<unsigned>(n1 + n2));
}

}  // namespace

Proportion clopper_pearson(std::size_t k, std::size_t n, double level) {
  const double tail = (1 - level) / 2;
  const auto trials = static_cast<double>(n), successes = static_cast<double>(k);
  Proportion out;
  out.low = k == 0 ? 0.0
                   : binomial_distribution<double>::find_lower_bound_on_p(
                         trials, successes, tail,
                         binomial_distribution<double>::clopper_pearson_exact_interval);
  out.high = k == n ? 1.0
                    : binomial_distribution<double>::find_upper_bound_on_p(
                          trials, successes, tail,
                          binomial_distribution<double>::clopper_pearson_exact_interval);
  return out;
}

double fisher_exact_greater(std::size_t a, std::size_t n1, std::size_t b, std::size_t n2) {
  const auto h = table_distribution(a, n1, b, n2);
  if (a == 0 || a <= boost::math::range(h).first) return 1.0;
  return std::min(1.0, boost::math::cdf(boost::math::complement(h, a - 1)));
}

double fisher_exact_two_sided(std::size_t a, std::size_t n1, std::size_t b, std::size_t n2) {
  const auto h = table_distribution(a, n1, b, n2);
  const double observed = boost::math::pdf(h, a);
  const auto [first, last] = boost::math::range(h);
  double p = 0;
  for (auto x = static_cast<std::size_t>(first); x <= static_cast<std::size_t>(last); ++x) {
    const double px = boost::math::pdf(h, x);
    if (px <= observed * (1 + 1e-7)) p += px;
  }
  return std::min(1.0, p);
}

}  // namespace fp8lab::experiments
