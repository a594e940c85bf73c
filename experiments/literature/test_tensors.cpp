#include "experiments/literature/test_tensors.hpp"

#include <cmath>
#include <numbers>
#include <random>

#include "sim/name_table.hpp"

namespace fp8lab::experiments::literature {
namespace {

// Standard normal draws by Box-Muller over 53-bit uniforms: std::normal_distribution's algorithm
// is left to the library, so its values would differ between standard libraries.
class Normal {
 public:
  explicit Normal(std::uint64_t seed) : engine_(seed) {}
  double operator()() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = uniform_open(), u2 = uniform_open();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  double uniform_open() {  // (0, 1]
    return (static_cast<double>(engine_() >> 11) + 1.0) * 0x1.0p-53;
  }
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2)); }

constexpr double kOutlierFraction = 0.01;
constexpr double kOutlierScale = 20.0;
constexpr double kWeightStd = 0.02;

}  // namespace

constexpr sim::NameTable<Distribution, 3> kDistributionNames{
    {{Distribution::kGaussian, "gaussian"},
     {Distribution::kNonnegative, "nonnegative"},
     {Distribution::kActivationLike, "activation-like"}}};
const char* to_string(Distribution d) { return sim::name_in(kDistributionNames, d); }

const std::vector<Distribution>& all_distributions() {
  static const std::vector<Distribution> all = {Distribution::kGaussian, Distribution::kNonnegative,
                                                Distribution::kActivationLike};
  return all;
}

OperandPair make_operands(Distribution d, std::int64_t rows_a, std::int64_t rows_b, std::int64_t k,
                          std::uint64_t seed) {
  OperandPair p{rows_a, rows_b, k, {}, {}};
  Normal normal(seed * 3 + static_cast<std::uint64_t>(d));
  p.a.resize(static_cast<std::size_t>(rows_a * k));
  p.b.resize(static_cast<std::size_t>(rows_b * k));
  // Outlier channels of the activation-like A: every 1/kOutlierFraction-th channel.
  const auto outlier_every = static_cast<std::int64_t>(std::lround(1.0 / kOutlierFraction));
  for (std::int64_t r = 0; r < rows_a; ++r) {
    for (std::int64_t c = 0; c < k; ++c) {
      const double z = normal();
      double v = z;
      if (d == Distribution::kNonnegative) v = std::fabs(z);
      if (d == Distribution::kActivationLike) {
        v = gelu(z) * (c % outlier_every == outlier_every / 2 ? kOutlierScale : 1.0);
      }
      p.a[static_cast<std::size_t>(r * k + c)] = static_cast<float>(v);
    }
  }
  for (auto& v : p.b) {
    const double z = normal();
    v = static_cast<float>(d == Distribution::kNonnegative      ? std::fabs(z)
                           : d == Distribution::kActivationLike ? kWeightStd * z
                                                                : z);
  }
  return p;
}

}  // namespace fp8lab::experiments::literature
