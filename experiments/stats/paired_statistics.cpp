#include "experiments/stats/paired_statistics.hpp"

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fp8lab::experiments {

double student_t_quantile(double p, double df) {
  return boost::math::quantile(boost::math::students_t(df), p);
}

double student_t_upper_tail(double t, double df) {
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(boost::math::students_t(df), t));
}

double MeanInterval::standard_error() const { return sd / std::sqrt(static_cast<double>(n)); }

double MeanInterval::degrees_of_freedom() const {
  return static_cast<double>((sd_n > 0 ? sd_n : n)) - 1;
}

double MeanInterval::half_width_at(double level) const {
  if (n < 2 || degrees_of_freedom() < 1) return INFINITY;
  return student_t_quantile((1 + level) / 2, degrees_of_freedom()) * standard_error();
}

std::optional<MeanInterval> t_interval(std::span<const double> values) {
  if (values.size() < 2) return std::nullopt;
  MeanInterval out;
  out.n = values.size();
  double sum = 0;
  for (const double v : values) sum += v;
  out.mean = sum / static_cast<double>(out.n);
  double squares = 0;
  for (const double v : values) squares += (v - out.mean) * (v - out.mean);
  out.sd = std::sqrt(squares / static_cast<double>(out.n - 1));
  out.half_width = out.half_width_at(0.95);
  return out;
}

double t_test_power(double effect, double sd, std::size_t n, double alpha) {
  if (n < 2) return 0;
  const double df = static_cast<double>(n - 1);
  const double critical = student_t_quantile(1 - alpha / 2, df);
  if (!(sd > 0)) return effect != 0 ? 1.0 : alpha;
  // Capped: Boost's series fail for a noncentrality near 1e13 (a spread of rounding error), and at
  // 1e4 the power is 1 to double precision for every df >= 1 (the miss needs the chi factor
  // above 1e4 / t_crit).
  const double noncentrality =
      std::min(1e4, std::fabs(effect) * std::sqrt(static_cast<double>(n)) / sd);
  const boost::math::non_central_t shifted(df, noncentrality);
  return boost::math::cdf(boost::math::complement(shifted, critical)) +
         boost::math::cdf(shifted, -critical);
}

double minimum_detectable_effect(std::size_t n, double sd, double alpha) {
  if (n < 2) return INFINITY;
  if (!(sd > 0)) return 0;
  // Power rises with the effect: double an upper end until it has the power, then bisect.
  double low = 0, high = sd / std::sqrt(static_cast<double>(n));
  while (t_test_power(high, sd, n, alpha) < kTargetPower) {
    low = high;
    high *= 2;
  }
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    const double mid = (low + high) / 2;
    (t_test_power(mid, sd, n, alpha) < kTargetPower ? low : high) = mid;
  }
  return high;
}

double non_inferiority_power(double effect, double band, double sd, std::size_t n, double alpha) {
  if (n < 2) return 0;
  if (!(sd > 0)) return effect < band ? 1.0 : 0.0;
  const double df = static_cast<double>(n - 1);
  const double critical = student_t_quantile(1 - alpha, df);
  // Capped as in t_test_power; a negative noncentrality (effect above the band) stays as it is.
  const double noncentrality =
      std::min(1e4, (band - effect) * std::sqrt(static_cast<double>(n)) / sd);
  return boost::math::cdf(
      boost::math::complement(boost::math::non_central_t(df, noncentrality), critical));
}

double tost_power(double effect, double band, double sd, std::size_t n, double alpha) {
  if (n < 2) return 0;
  if (!(sd > 0)) return std::fabs(effect) < band ? 1.0 : 0.0;
  const double df = static_cast<double>(n - 1);
  const double critical = student_t_quantile(1 - alpha, df);
  const double root_n = std::sqrt(static_cast<double>(n));
  const double lower = (band + effect) * root_n / sd, upper = (band - effect) * root_n / sd;
  // Both reject iff critical u - lower < Z < upper - critical u: empty from u = u_max on.
  const double u_max = (lower + upper) / (2 * critical);
  if (!(u_max > 0)) return 0;
  const boost::math::normal z;
  const boost::math::chi_squared chi2(df);
  const auto integrand = [&](double u) {
    const double inside = boost::math::cdf(z, upper - critical * u) -
                          boost::math::cdf(z, critical * u - lower);
    // The density of u = s / sd = sqrt(chi2_df / df).
    return std::max(0.0, inside) * 2 * df * u * boost::math::pdf(chi2, df * u * u);
  };
  // u has mean about 1 and sd about 1 / sqrt(2 df): beyond 12 of those the density is below
  // double precision's reach of the total.
  const double spread = 12 / std::sqrt(2 * df);
  const double from = std::max(0.0, 1 - spread), to = std::min(u_max, 1 + spread);
  if (!(to > from)) return 0;
  return std::clamp(
      boost::math::quadrature::gauss_kronrod<double, 61>::integrate(integrand, from, to, 15, 1e-12),
      0.0, 1.0);
}

std::optional<std::size_t> seeds_for_power(const std::function<double(std::size_t)>& power,
                                           std::size_t cap) {
  auto enough = [&](std::size_t n) { return power(n) >= kTargetPower; };
  if (enough(2)) return 2;
  // Power rises with n: double until enough, then bisect.
  std::size_t low = 2, high = 4;
  while (!enough(high)) {
    if (high >= cap) return std::nullopt;
    low = high;
    high = std::min(cap, high * 2);
  }
  while (high - low > 1) {
    const std::size_t mid = low + (high - low) / 2;
    (enough(mid) ? high : low) = mid;
  }
  return high;
}

std::optional<std::size_t> seeds_for_power(double effect, double sd, double alpha,
                                           std::size_t cap) {
  if (effect == 0 || !std::isfinite(effect)) return std::nullopt;
  return seeds_for_power([&](std::size_t n) { return t_test_power(effect, sd, n, alpha); }, cap);
}

std::string signed_percent(double fraction) {
  if (std::isnan(fraction)) return "nan";
  if (std::isinf(fraction)) return fraction > 0 ? "+inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.3g%%", fraction * 100);
  return buffer;
}

std::string describe_interval(const MeanInterval& interval) {
  return signed_percent(interval.mean) + " [" + signed_percent(interval.low()) + ", " +
         signed_percent(interval.high()) + "] (n=" + std::to_string(interval.n) + ")";
}

}  // namespace fp8lab::experiments
