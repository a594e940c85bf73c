#include "sim/optim/exact_power.hpp"

#include <cmath>
#include <limits>

namespace fp8lab::sim::optim {
namespace {
constexpr double kLn2 = 0.6931471805599453094;        // double nearest ln 2
constexpr double kSqrtHalf = 0.70710678118654752440;  // double nearest sqrt(1/2)
}  // namespace

double exact_log2(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // exact: x = m 2^e, m in [1/2, 1)
  if (m < kSqrtHalf) {
    m *= 2.0;  // exact
    --e;
  }
  // ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.1716: 24 odd terms reach 1e-37.
  const double t = (m - 1.0) / (m + 1.0);
  const double t2 = t * t;
  double power = t, sum = 0.0;
  for (int k = 1; k < 48; k += 2) {
    sum += power / static_cast<double>(k);
    power *= t2;
  }
  return static_cast<double>(e) + 2.0 * sum / kLn2;
}

double exact_exp2(double y) {
  if (y >= 1024.0) return std::numeric_limits<double>::infinity();
  if (y < -1100.0) return 0.0;
  const double n = std::floor(y);
  const double r = (y - n) * kLn2;  // y - n exact; r in [0, ln 2)
  // e^r by Taylor: 0.694^26 / 26! < 1e-28.
  double term = 1.0, sum = 1.0;
  for (int k = 1; k <= 26; ++k) {
    term *= r / static_cast<double>(k);
    sum += term;
  }
  return std::ldexp(sum, static_cast<int>(n));
}

float exact_power(float x, float k) {
  if (k == 0.0f) return 1.0f;
  if (std::isnan(x)) return x;
  if (x == 0.0f) return 0.0f;
  if (x == 1.0f) return 1.0f;
  if (std::isinf(k)) return x < 1.0f ? 0.0f : std::numeric_limits<float>::infinity();
  if (std::isinf(x)) return std::numeric_limits<float>::infinity();
  return static_cast<float>(exact_exp2(static_cast<double>(k) * exact_log2(x)));
}

}  // namespace fp8lab::sim::optim
