// Properties every recipe of sim/scaling/ must have (issue 4 acceptance): the dequantization
// error bound per format on random data, survival and exact counting on NaN / Inf / all-zero /
// denormal tensors, and the statistics of sim/scaling/stats.hpp.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/cast.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/rowwise.hpp"
#include "sim/scaling/stats.hpp"
#include "tests/sim/float_bits.hpp"
#include "tests/sim/random_floats.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::testing;

namespace {

constexpr std::int64_t kRows = 192;
constexpr std::int64_t kCols = 160;

using Quantizer = std::function<QuantizeResult(std::span<const float>, std::int64_t, std::int64_t)>;

struct Recipe {
  std::string name;
  Format format;
  bool nan_poisons_scope;  // torchao: a NaN makes its whole scope (tensor, row, block) NaN
  Quantizer quantize;
};

std::vector<Recipe> all_recipes() {
  std::vector<Recipe> recipes;
  for (const Format f : {Format::E4M3, Format::E5M2}) {
    const std::string fn = spec(f).name;
    recipes.push_back({"delayed(step 2) " + fn, f, false,
                       [f](std::span<const float> x, std::int64_t r, std::int64_t c) {
                         DelayedScalingConfig config;
                         config.fp8_format = f == Format::E4M3 ? Fp8Format::kE4M3
                                                               : Fp8Format::kE5M2;
                         DelayedScalingLinear layer(config);
                         layer.quantize_input(x, r, c);  // step 1 records the amax
                         layer.end_of_forward();
                         return layer.quantize_input(x, r, c);
                       }});
    recipes.push_back({"current_te " + fn, f, false,
                       [f](std::span<const float> x, std::int64_t r, std::int64_t c) {
                         return quantize_current_te(x, r, c, f);
                       }});
    recipes.push_back({"current_te pow2 " + fn, f, false,
                       [f](std::span<const float> x, std::int64_t r, std::int64_t c) {
                         return quantize_current_te(x, r, c, f, true);
                       }});
    recipes.push_back({"tensorwise_torchao " + fn, f, true,
                       [f](std::span<const float> x, std::int64_t r, std::int64_t c) {
                         return quantize_tensorwise_torchao(x, r, c, f);
                       }});
    for (const ScaleAxis axis : {ScaleAxis::kRowwise, ScaleAxis::kColumnwise}) {
      recipes.push_back({std::string("axiswise_torchao pow2 ") + to_string(axis) + " " + fn, f,
                         true, [f, axis](std::span<const float> x, std::int64_t r, std::int64_t c) {
                           return quantize_axiswise_torchao(x, r, c, axis, f, true);
                         }});
    }
    for (const BlockShape b : {kBlock1x128, kBlock128x1, kBlock128x128}) {
      recipes.push_back(
          {"block_te " + std::to_string(b.rows) + "x" + std::to_string(b.cols) + " " + fn, f, false,
           [f, b](std::span<const float> x, std::int64_t r, std::int64_t c) {
             BlockScalingConfig config;
             config.block = b;
             return quantize_block_te(x, r, c, f, config);
           }});
    }
    for (const E8M0Mode m :
         {E8M0Mode::kTe, E8M0Mode::kFloor, E8M0Mode::kCeil, E8M0Mode::kEven, E8M0Mode::kRceil}) {
      const bool poisons = m != E8M0Mode::kTe;
      for (const TorchaoVersion v : {TorchaoVersion::kV0_18, TorchaoVersion::kMain}) {
        if (m == E8M0Mode::kTe && v == TorchaoVersion::kMain) continue;  // te has no version
        const std::string mode = std::string(to_string(m)) +
                                 (poisons ? std::string(" ") + to_string(v) : "");
        for (const ScaleAxis axis : {ScaleAxis::kRowwise, ScaleAxis::kColumnwise}) {
          recipes.push_back(
              {"mx " + mode + " " + to_string(axis) + " " + fn, f, poisons,
               [f, m, v, axis](std::span<const float> x, std::int64_t r, std::int64_t c) {
                 return quantize_mx(x, r, c, axis, f, m, v);
               }});
        }
        // The version changes the scale rule only, not the block walk: one 2-D layout suffices.
        if (v == TorchaoVersion::kMain) continue;
        recipes.push_back({"mx 2d " + mode + " " + fn, f, poisons,
                           [f, m, v](std::span<const float> x, std::int64_t r, std::int64_t c) {
                             return quantize_mx_2d(x, r, c, f, m, v);
                           }});
      }
    }
  }
  return recipes;
}

// Random values spanning 2^-20 .. 2^20 with random signs.
std::vector<float> wide_random(std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> exponent(-20.0f, 20.0f);
  std::uniform_int_distribution<int> sign(0, 1);
  std::vector<float> x(static_cast<std::size_t>(kRows * kCols));
  for (float& v : x) v = (sign(gen) ? -1.0f : 1.0f) * std::exp2(exponent(gen));
  return x;
}

}  // namespace

// Away from overflow, decode(q) * scale_inv differs from x by at most half an FP8 ulp of the
// scaled value, mapped back through the scale: |x̂ - x| <= max(|x| 2^-(m+1), 2^(s_min-1) / s),
// with s_min the smallest subnormal exponent, plus the fp32 roundings of x*s, RN(1/s) and the
// dequantization multiply (a few 2^-24 relative, and 2^-149 absolute for subnormal fp32 results).
TEST_CASE("Every recipe: dequantize(quantize(x)) error bound per format on random data") {
  const std::vector<float> x = wide_random(42);
  for (const Recipe& recipe : all_recipes()) {
    const QuantizeResult r = recipe.quantize(x, kRows, kCols);
    const QuantizedTensor& t = r.tensor;
    const FormatSpec& fs = spec(recipe.format);
    const double max_finite = fs.max_finite();
    const std::vector<float> xhat = dequantize(t);
    std::uint64_t checked = 0;
    for (std::int64_t row = 0; row < kRows; ++row) {
      for (std::int64_t col = 0; col < kCols; ++col) {
        const auto i = static_cast<std::size_t>(row * kCols + col);
        const double s = t.scale[static_cast<std::size_t>((row / t.block_rows) * t.scale_cols() +
                                                          col / t.block_cols)];
        const double v = x[i];
        if (std::fabs(v) * s > max_finite) continue;  // saturates by design (e.g. MX floor)
        const double bound = std::fmax(std::fabs(v) * std::ldexp(1.0, -(fs.mantissa_bits + 1)),
                                       std::ldexp(1.0, fs.min_subnormal_exponent() - 1) / s) *
                                 (1.0 + std::ldexp(1.0, -20)) +
                             std::fabs(v) * std::ldexp(1.0, -21) + std::ldexp(1.0, -149);
        const double error = std::fabs(static_cast<double>(xhat[i]) - v);
        INFO(recipe.name << " (" << row << ", " << col << ") x " << v << " x̂ " << xhat[i]
                         << " code 0x" << std::hex << int(t.data[i]) << " scale " << s);
        REQUIRE(error <= bound);
        ++checked;
      }
    }
    INFO(recipe.name);
    CHECK(checked > static_cast<std::uint64_t>(kRows * kCols) * 9 / 10);
  }
}

// Upstream SQNR floors: torchao test_base.py (axiswise cast >= 25 dB) and test_mx_tensor.py
// (MX: >= 18 dB for e4m3, >= 13 dB otherwise). The same floors for every recipe here.
TEST_CASE("Every recipe: SQNR on random data is above torchao's test floors") {
  const std::vector<float> x = wide_random(7);
  for (const Recipe& recipe : all_recipes()) {
    const QuantizeResult r = recipe.quantize(x, kRows, kCols);
    const TensorStats s = tensor_stats(x, r);
    INFO(recipe.name << " sqnr " << s.sqnr_db << " dB, max rel error " << s.max_rel_error);
    const bool mx = recipe.name.rfind("mx", 0) == 0;
    const double floor_db = recipe.format == Format::E4M3 ? (mx ? 18.0 : 25.0) : 13.0;
    CHECK(s.sqnr_db >= floor_db);
    CHECK(s.count == static_cast<std::uint64_t>(kRows * kCols));
    CHECK(s.input_nan == 0);
    CHECK(s.nan == 0);
  }
}

TEST_CASE("Every recipe survives NaN / Inf / zero / denormal data and counts it") {
  std::mt19937 gen(99);
  std::uniform_int_distribution<std::uint32_t> subnormal(1, 0x007F'FFFF);
  std::vector<float> mixed =
      uniform_floats(static_cast<std::size_t>(kRows * kCols), -4.0f, 4.0f, gen);
  const std::size_t nan_at[] = {3, 1000, 20000};
  const std::size_t inf_at[] = {17, 5000, 30001};
  const std::size_t zero_at[] = {5, 6, 7, 8};
  const std::size_t denormal_at[] = {100, 200};
  for (auto i : nan_at) mixed[i] = kNaN;
  for (auto i : inf_at) mixed[i] = i % 2 ? kInf : -kInf;
  for (auto i : zero_at) mixed[i] = 0.0f;
  for (auto i : denormal_at) mixed[i] = std::bit_cast<float>(subnormal(gen));

  const std::vector<float> zeros(static_cast<std::size_t>(kRows * kCols), 0.0f);
  std::vector<float> denormals(static_cast<std::size_t>(kRows * kCols));
  std::uniform_int_distribution<std::uint32_t> sign_bit(0, 1);
  for (float& v : denormals) v = std::bit_cast<float>(subnormal(gen) | (sign_bit(gen) << 31));
  const std::vector<float> nans(static_cast<std::size_t>(kRows * kCols), kNaN);
  const auto n = static_cast<std::uint64_t>(kRows * kCols);

  for (const Recipe& recipe : all_recipes()) {
    INFO(recipe.name);
    {
      const QuantizeResult r = recipe.quantize(mixed, kRows, kCols);
      const TensorStats s = tensor_stats(mixed, r);
      CHECK(s.count == n);
      CHECK(s.input_nan == 3);
      CHECK(s.input_inf == 3);
      CHECK(s.input_zero == 4);
      CHECK(s.input_denormal == 2);
      CHECK(s.amax == kInf);
      if (recipe.nan_poisons_scope) {
        CHECK(s.nan >= 3);
      } else {
        CHECK(s.nan == 3);  // TE: NaN in, NaN out; the scale ignores it
        for (auto i : nan_at) CHECK(r.tensor.data[i] == 0x7F);
      }
    }
    {
      const QuantizeResult r = recipe.quantize(zeros, kRows, kCols);
      const TensorStats s = tensor_stats(zeros, r);
      CHECK(s.input_zero == n);
      CHECK(s.underflowed == 0);
      CHECK(s.nan == 0);
      CHECK(s.saturated == 0);
      CHECK(s.sqnr_db == kInf);  // no error at all
      for (auto q : r.tensor.data) REQUIRE(q == 0x00);
    }
    {
      const QuantizeResult r = recipe.quantize(denormals, kRows, kCols);
      const TensorStats s = tensor_stats(denormals, r);
      CHECK(s.input_denormal == n);
      CHECK(s.nan == 0);
      CHECK(s.amax > 0.0f);
      // Every input is non-zero, so the underflow count is exactly the number of ±0 codes.
      std::uint64_t zero_codes = 0;
      for (auto q : r.tensor.data) zero_codes += (q & 0x7F) == 0 ? 1 : 0;
      CHECK(s.underflowed == zero_codes);
    }
    {
      const QuantizeResult r = recipe.quantize(nans, kRows, kCols);
      const TensorStats s = tensor_stats(nans, r);
      CHECK(s.input_nan == n);
      CHECK(s.nan == n);
      CHECK(s.amax == 0.0f);
      CHECK(std::isnan(s.sqnr_db));  // nothing finite to measure
    }
  }
}

TEST_CASE("tensor_stats: exact values, scale range and the error measures") {
  const std::vector<float> exact = {1.0f, -2.0f, 0.5f, 0.0f, 448.0f, -0.25f};
  const QuantizeResult r = quantize_current_te(exact, 2, 3, Format::E4M3);  // scale 1
  const TensorStats s = tensor_stats(exact, r);
  CHECK(s.scale_min == 1.0f);
  CHECK(s.scale_max == 1.0f);
  CHECK(s.sqnr_db == kInf);
  CHECK(s.max_rel_error == 0.0);
  CHECK(s.amax == 448.0f);

  // 1.1 is not an E4M3 value: with scale 1, E4M3 near 1.1 has spacing 0.125 -> 1.125.
  const std::vector<float> one = {1.1f, 448.0f};
  const QuantizeResult q = quantize_current_te(one, 1, 2, Format::E4M3);
  const TensorStats t = tensor_stats(one, q);
  const double err = 1.125 - static_cast<double>(1.1f);
  CHECK(t.max_rel_error == Approx(err / static_cast<double>(1.1f)).epsilon(1e-12));
  const double signal = static_cast<double>(1.1f) * static_cast<double>(1.1f) + 448.0 * 448.0;
  CHECK(t.sqnr_db == Approx(10.0 * std::log10(signal / (err * err))).epsilon(1e-12));

  // Blocked tensors report the smallest and largest multiplier.
  std::vector<float> two_rows(64, 1.0f);
  for (int i = 32; i < 64; ++i) two_rows[static_cast<std::size_t>(i)] = 4.0f;
  const TensorStats b =
      tensor_stats(two_rows, quantize_mx(two_rows, 2, 32, ScaleAxis::kRowwise, Format::E4M3));
  CHECK(b.scale_min == 64.0f);   // amax 4: e = ceil(log2(4/448)) = -6 -> mult 2^6
  CHECK(b.scale_max == 256.0f);  // amax 1: -8 -> 2^8
}

// sim/scaling/blocked.hpp's contract, checked against the plain definition: gather each block,
// sim::quantize it with the block's multiplier, and compare bytes and merged statistics. The data
// includes blocks where RN(x * s) is already 0 in fp32 (an Inf amax: torchao s = 0, MX te
// s = 2^-127 on denormals), which the walk must still count as underflow.
TEST_CASE("Every blocked recipe equals sim::quantize applied block by block") {
  std::mt19937 gen(123);
  std::uniform_int_distribution<std::uint32_t> subnormal(1, 0x007F'FFFF);
  std::vector<float> x = uniform_floats(static_cast<std::size_t>(kRows * kCols), -2.0f, 2.0f, gen);
  for (std::size_t i = 0; i < 64; ++i) x[i] = std::bit_cast<float>(subnormal(gen));  // row 0
  x[40] = kInf;         // row 0, in a block with denormals
  x[kCols + 3] = kNaN;  // row 1
  x[static_cast<std::size_t>(5 * kCols + 100)] = -kInf;
  for (std::size_t i = 0; i < 32; ++i) x[static_cast<std::size_t>(7 * kCols) + i] = 0.0f;

  for (const Recipe& recipe : all_recipes()) {
    const QuantizeResult r = recipe.quantize(x, kRows, kCols);
    const QuantizedTensor& t = r.tensor;
    if (t.block_rows == kRows && t.block_cols == kCols) continue;  // per-tensor: one quantize call
    QuantizeStats expected;
    for (std::int64_t bi = 0; bi < t.scale_rows(); ++bi) {
      for (std::int64_t bj = 0; bj < t.scale_cols(); ++bj) {
        std::vector<float> block;
        std::vector<std::size_t> where;
        for (std::int64_t row = bi * t.block_rows; row < std::min(kRows, (bi + 1) * t.block_rows);
             ++row) {
          for (std::int64_t col = bj * t.block_cols; col < std::min(kCols, (bj + 1) * t.block_cols);
               ++col) {
            where.push_back(static_cast<std::size_t>(row * kCols + col));
            block.push_back(x[where.back()]);
          }
        }
        const float s = t.scale[static_cast<std::size_t>(bi * t.scale_cols() + bj)];
        std::vector<std::uint8_t> codes(block.size());
        expected.merge(quantize(block, s, recipe.format, Overflow::kSatFinite, codes));
        for (std::size_t k = 0; k < block.size(); ++k) {
          INFO(recipe.name << " block (" << bi << ", " << bj << ") element " << where[k] << " x "
                           << block[k] << " scale " << s);
          REQUIRE(int(t.data[where[k]]) == int(codes[k]));
        }
      }
    }
    INFO(recipe.name);
    CHECK(std::bit_cast<std::uint32_t>(r.stats.amax) ==
          std::bit_cast<std::uint32_t>(expected.amax));
    CHECK(r.stats.count == expected.count);
    CHECK(r.stats.saturated == expected.saturated);
    CHECK(r.stats.underflowed == expected.underflowed);
    CHECK(r.stats.nan == expected.nan);
  }
}
