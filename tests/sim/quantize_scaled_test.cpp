// quantize_scaled, quantize_scaled_rows, run_amax and column_amax (sim/quantize_scaled.hpp), the
// one-call-per-row passes of the block and MX quantizers, against the scalar reference run by
// run (reference::quantize with each run's scale; quantize_scaled row by row; a NaN-skipping max
// loop), byte for byte and statistic for statistic, on every SIMD target
// Highway compiled that this CPU runs: runs of 1 (a scale per element), 16, 32 and 128 (the
// vectorized path), 3 and 48 (run by run), lengths that leave a partial last run and a scalar tail,
// and scales that are exact, inexact, zero, negative, huge and non-finite (run by run).
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "sim/quantize_scaled.hpp"
#include "tests/sim/float_bits.hpp"
#include "tests/sim/quantize_targets.hpp"
#include "tests/support/quantize_stats.hpp"

using namespace fp8lab::sim;
using fp8lab::testing::check_same_stats;
using namespace fp8lab::testing;

namespace {

// Normal values near FP8's range, with NaN, ±Inf, ±0 and fp32 subnormals mixed in.
std::vector<float> mixed_input(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 50.0f);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), kInf,  -kInf, 0.0f, -0.0f,
                            std::bit_cast<float>(0x0000'0003u),      1e-30f};
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = i % 37 == 5 ? specials[(i / 37) % 7] : normal(rng);
  return x;
}

std::vector<float> scales_for(std::size_t count, std::uint32_t seed, bool with_non_finite) {
  const float choices[] = {1.0f,  0.125f, 4.0f, 0.7f, 3.0f, 0.0f, std::ldexp(1.0f, 100),
                           -0.5f, 1e-3f};
  std::mt19937 rng(seed);
  std::vector<float> s(count);
  for (auto& v : s) v = choices[rng() % std::size(choices)];
  if (with_non_finite && count > 1) s[count / 2] = kInf;
  return s;
}

}  // namespace

TEST_CASE("quantize_scaled equals reference::quantize run by run, every target") {
  for (const std::size_t run : {std::size_t{1}, std::size_t{3}, std::size_t{16}, std::size_t{32},
                                std::size_t{48}, std::size_t{128}}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{100},
                                std::size_t{517}, std::size_t{1024}}) {
      for (const bool non_finite : {false, true}) {
        const auto x = mixed_input(n, static_cast<std::uint32_t>(n + run));
        const std::size_t runs = (n + run - 1) / run;
        const auto scales = scales_for(runs, static_cast<std::uint32_t>(7 * n + run), non_finite);
        for (const Format format : {Format::E4M3, Format::E5M2}) {
          for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat}) {
            std::vector<std::uint8_t> want(n);
            QuantizeStats want_stats;
            for (std::size_t r = 0; r < runs; ++r) {
              const std::size_t begin = r * run, length = std::min(run, n - begin);
              want_stats.merge(reference::quantize(std::span(x).subspan(begin, length), scales[r],
                                                   format, mode,
                                                   std::span(want).subspan(begin, length)));
            }
            fp8lab::testing::for_each_simd_target([&] {
              INFO("run " << run << ", n " << n << ", " << spec(format).name << " "
                          << to_string(mode) << (non_finite ? ", an Inf scale" : ""));
              std::vector<std::uint8_t> got(n);
              const QuantizeStats got_stats =
                  quantize_scaled(x, scales, run, format, mode, std::span(got));
              const auto first = std::mismatch(got.begin(), got.end(), want.begin()).first;
              if (first != got.end()) {
                const auto i = static_cast<std::size_t>(first - got.begin());
                char line[160];
                std::snprintf(line, sizeof line,
                              "element %zu, input bits 0x%08X, scale %g: got 0x%02X, want 0x%02X",
                              i, std::bit_cast<std::uint32_t>(x[i]), scales[i / run], got[i],
                              want[i]);
                FAIL(line);
              }
              check_same_stats(got_stats, want_stats);
            });
          }
        }
      }
    }
  }
}

TEST_CASE("quantize_scaled refuses run 0 and too few scales") {
  std::vector<float> x(10, 1.0f), scales(2, 1.0f);
  std::vector<std::uint8_t> out(10);
  CHECK_THROWS_WITH(quantize_scaled(x, scales, 0, Format::E4M3, Overflow::kSatFinite, out),
                    Catch::Contains("run = 0"));
  CHECK_THROWS_WITH(quantize_scaled(x, scales, 4, Format::E4M3, Overflow::kSatFinite, out),
                    Catch::Contains("2 scales for 10 elements"));
}

TEST_CASE("run_amax equals a NaN-skipping max and a NaN test per run, every target") {
  const auto x = mixed_input(1000, 11);
  for (const std::size_t run :
       {std::size_t{3}, std::size_t{16}, std::size_t{32}, std::size_t{128}}) {
    fp8lab::testing::for_each_simd_target([&] {
      INFO("run " << run);
      std::vector<float> amax(x.size() / run + 1, -1.0f);
      std::vector<std::uint8_t> has_nan(amax.size(), 7);
      const std::size_t done = run_amax(x, run, amax, has_nan);
      CHECK(done == (run == 3 ? 0 : x.size() / run));  // 3: not a power of two >= 16
      for (std::size_t r = 0; r < done; ++r) {
        float want = 0.0f;
        bool nan = false;
        for (std::size_t i = r * run; i < (r + 1) * run; ++i) {
          want = amax_update(want, x[i]);
          nan = nan || std::isnan(x[i]);
        }
        INFO("run index " << r);
        CHECK(std::bit_cast<std::uint32_t>(amax[r]) == std::bit_cast<std::uint32_t>(want));
        CHECK(has_nan[r] == (nan ? 1 : 0));
      }
    });
  }
}

TEST_CASE("quantize_scaled_rows equals quantize_scaled row by row, every target") {
  for (const std::size_t run : {std::size_t{1}, std::size_t{3}, std::size_t{32}}) {
    for (const std::size_t cols : {std::size_t{1}, std::size_t{37}, std::size_t{96}}) {
      for (const bool non_finite : {false, true}) {
        const std::size_t rows = 5;
        const auto x = mixed_input(rows * cols, static_cast<std::uint32_t>(cols + run));
        const auto scales = scales_for((cols + run - 1) / run,
                                       static_cast<std::uint32_t>(3 * cols + run), non_finite);
        std::vector<std::uint8_t> want(x.size());
        QuantizeStats want_stats;
        for (std::size_t r = 0; r < rows; ++r) {
          want_stats.merge(quantize_scaled(std::span(x).subspan(r * cols, cols), scales, run,
                                           Format::E4M3, Overflow::kSatFinite,
                                           std::span(want).subspan(r * cols, cols)));
        }
        fp8lab::testing::for_each_simd_target([&] {
          INFO("run " << run << ", cols " << cols << (non_finite ? ", an Inf scale" : ""));
          std::vector<std::uint8_t> got(x.size());
          const QuantizeStats got_stats = quantize_scaled_rows(
              x, cols, scales, run, Format::E4M3, Overflow::kSatFinite, std::span(got));
          CHECK(got == want);
          check_same_stats(got_stats, want_stats);
        });
      }
    }
  }
  std::vector<float> x(10, 1.0f), scales(4, 1.0f);
  std::vector<std::uint8_t> out(10);
  CHECK_THROWS_WITH(quantize_scaled_rows(x, 4, scales, 1, Format::E4M3, Overflow::kSatFinite, out),
                    Catch::Contains("cols = 4 does not divide the 10 elements"));
  CHECK_THROWS_WITH(quantize_scaled_rows(x, 5, scales, 1, Format::E4M3, Overflow::kSatFinite, out),
                    Catch::Contains("4 scales for 5 elements"));
}

TEST_CASE("column_amax equals a NaN-skipping max and a NaN test per column, every target") {
  const std::size_t cols = 1000;  // not a multiple of any target's lanes: a tail is left
  const auto row0 = mixed_input(cols, 21), row1 = mixed_input(cols, 22);
  fp8lab::testing::for_each_simd_target([&] {
    std::vector<float> amax(cols, 0.0f);
    std::vector<std::uint8_t> has_nan(cols, 0);
    // Two rows, so the second one meets amaxes and flags the first one left.
    const std::size_t done0 = column_amax(row0, amax, has_nan);
    const std::size_t done1 = column_amax(row1, amax, has_nan);
    CHECK(done0 == done1);
    CHECK(done0 + 16 > cols);  // only the last partial vector is left
    CHECK(done0 <= cols);
    for (std::size_t c = 0; c < done0; ++c) {
      const float want = amax_update(amax_update(0.0f, row0[c]), row1[c]);
      const bool nan = std::isnan(row0[c]) || std::isnan(row1[c]);
      INFO("column " << c << ", inputs " << row0[c] << " and " << row1[c]);
      CHECK(std::bit_cast<std::uint32_t>(amax[c]) == std::bit_cast<std::uint32_t>(want));
      CHECK(has_nan[c] == (nan ? 1 : 0));
    }
    for (std::size_t c = done0; c < cols; ++c) CHECK(amax[c] == 0.0f);  // untouched
  });
}
