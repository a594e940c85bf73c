#include "experiments/report/paired_statistics.hpp"

#include <array>
#include <cmath>
#include <cstdio>

namespace fp8lab::experiments {
namespace {

// t_975 for df = 1..30 (any statistics table; checked against a numerical integration of the t
// density to 9 digits). Beyond 30 the Cornish-Fisher expansion below is accurate to 1e-5; a
// library (Boost.Math) for 30 numbers and 5 terms would be a new dependency of every build.
constexpr std::array<double, 30> kT975 = {
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
    2.364624252,  2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
    2.160368656,  2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
    2.093024054,  2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
    2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456};

// Cornish-Fisher expansion of the t quantile in 1/df around the normal quantile z (Abramowitz
// and Stegun 26.7.5).
double cornish_fisher_t(double z, double df) {
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  const double g1 = (z3 + z) / 4;
  const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
  const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
  const double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
  return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

constexpr double kZ975 = 1.959963984540054;

}  // namespace

double student_t_975(std::size_t df) {
  if (df == 0) return INFINITY;
  if (df <= kT975.size()) return kT975[df - 1];
  return cornish_fisher_t(kZ975, static_cast<double>(df));
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
  out.half_width = student_t_975(out.n - 1) * out.sd / std::sqrt(static_cast<double>(out.n));
  return out;
}

const char* to_string(BandVerdict verdict) {
  switch (verdict) {
    case BandVerdict::kDegrades: return "degrades";
    case BandVerdict::kWithinBand: return "within band";
    case BandVerdict::kInconclusive: return "inconclusive";
  }
  return "?";
}

BandVerdict judge(const MeanInterval& interval, double band) {
  if (interval.low() > band) return BandVerdict::kDegrades;
  if (interval.high() <= band) return BandVerdict::kWithinBand;
  return BandVerdict::kInconclusive;
}

std::optional<std::size_t> seeds_to_settle(const MeanInterval& interval, double band,
                                           std::size_t cap) {
  const double distance = std::fabs(interval.mean - band);
  if (!(distance > 0)) return std::nullopt;
  for (std::size_t n = 2; n <= cap; ++n) {
    const double half = student_t_975(n - 1) * interval.sd / std::sqrt(static_cast<double>(n));
    if (half < distance) return std::max(n, interval.n);
  }
  return std::nullopt;
}

double smallest_resolvable_effect(std::size_t n, double sd, double band) {
  if (n < 2) return INFINITY;
  return band + student_t_975(n - 1) * sd / std::sqrt(static_cast<double>(n));
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
