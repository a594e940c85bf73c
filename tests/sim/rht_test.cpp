// The random Hadamard transform (sim/rht.hpp): TE's sign vector, the Sylvester matrix, the bf16
// tensor-core arithmetic (truncation to 25 fraction bits, RZ to fp32, RN to bf16), layouts and
// errors; the Highway lanes against the scalar model on every SIMD target. Bit-exact against
// MMA-Sim's bf16 MMA: tests/python/test_block_scaled_mmasim.py.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <hwy/targets.h>

#include <catch2/catch.hpp>
#include <string>

#include "sim/cast.hpp"
#include "sim/rht.hpp"
#include "sim/rht_lanes.hpp"
#include "sim/transposed.hpp"

namespace fp8lab::testing {
namespace {

using sim::RhtAxis;
using sim::transposed;

std::vector<float> chunk(std::vector<float> head) {
  head.resize(16, 0.0f);
  return head;
}

std::vector<float> transform(const std::vector<float>& x) {
  std::vector<float> y(16);
  sim::random_hadamard_chunk_bf16(x.data(), sim::kTeRhtSignMask, y.data());
  return y;
}

TEST_CASE("the sign mask is TE's get_wgrad_sign_vector as get_sign_from_vector packs it") {
  constexpr std::array<int, 16> kTeSigns = {1,  1,  1,  -1, 1,  -1, -1, -1,
                                            -1, -1, -1, 1,  -1, 1,  -1, -1};
  unsigned mask = 0, bit = 1;
  for (int sign : kTeSigns) {
    if (sign == -1) mask |= bit;
    bit <<= 1;
  }
  CHECK(mask == sim::kTeRhtSignMask);
}

TEST_CASE("a unit input gives row i of diag(sign) H16 / 4") {
  for (int i = 0; i < 16; ++i) {
    std::vector<float> x(16, 0.0f);
    x[i] = 1.0f;
    const auto y = transform(x);
    const float sign = ((sim::kTeRhtSignMask >> i) & 1) ? -1.0f : 1.0f;
    for (int j = 0; j < 16; ++j) {
      const float h = (std::popcount(static_cast<unsigned>(i & j)) & 1) ? -1.0f : 1.0f;
      INFO("i = " << i << ", j = " << j);
      CHECK(y[j] == 0.25f * sign * h);
    }
  }
}

TEST_CASE("RZ to fp32 before the bf16 rounding: one bf16 ulp below an fp32 accumulation") {
  // Column 0 (M[i][0] = sign_i / 4, signs 0-2 are +1): 0.25 + 1.5 * 2^-9 - 2^-27 = T - 2^-27 with
  // T a bf16 tie whose even neighbour is above. On the grid 2^(-2 - 25) the sum is exact; RZ to
  // fp32 gives T - 2^-25, which rounds down to 0.25 + 2^-9. An fp32 RN accumulation would give T
  // and round up to 0.25 + 2^-8.
  const auto y = transform(chunk({1.0f, 0x1.8p-7f, -0x1p-25f}));
  CHECK(y[0] == 0.25f + 0x1p-9f);
  // Terms below the grid are truncated: 2^-40 vanishes next to 0.25 (an exact sum would round
  // 0.25 + 2^-10 + 2^-40 up to 0.25 + 2^-9; the tie 0.25 + 2^-10 rounds to even, 0.25).
  CHECK(transform(chunk({1.0f, 0x1p-8f, 0x1p-38f}))[0] == 0.25f);
  // Inputs are rounded to bf16 first: 1 + 2^-9 is 1.
  CHECK(transform(chunk({1.0f + 0x1p-9f}))[0] == 0.25f);
}

TEST_CASE("NaN and Inf inputs") {
  const auto nan = transform(chunk({std::numeric_limits<float>::quiet_NaN()}));
  for (float v : nan) CHECK(std::isnan(v));
  const auto inf = transform(chunk({std::numeric_limits<float>::infinity()}));
  for (int j = 0; j < 16; ++j) CHECK(std::fabs(inf[j]) == std::numeric_limits<float>::infinity());
  CHECK(transform(chunk({}))[3] == 0.0f);
  CHECK(!std::signbit(transform(chunk({-0.0f}))[3]));
}

TEST_CASE("kRows chunks run down a column: the transpose of kCols") {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  const std::int64_t rows = 32, cols = 5;
  std::vector<float> x(rows * cols), y(rows * cols), yt(rows * cols);
  for (auto& v : x) v = normal(rng);
  const std::vector<float> xt = transposed(x, rows, cols);
  sim::random_hadamard_transform_bf16(x, rows, cols, RhtAxis::kRows, sim::kTeRhtSignMask, y);
  sim::random_hadamard_transform_bf16(xt, cols, rows, RhtAxis::kCols, sim::kTeRhtSignMask, yt);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      INFO("r = " << r << ", c = " << c);
      CHECK(std::bit_cast<std::uint32_t>(y[r * cols + c]) ==
            std::bit_cast<std::uint32_t>(yt[c * rows + r]));
    }
  }
  // Every output is a bf16 value.
  for (float v : y) CHECK(sim::bf16_to_fp32(sim::fp32_to_bf16(v)) == v);
  CHECK_THROWS_WITH(
      sim::random_hadamard_transform_bf16(x, cols, rows, RhtAxis::kRows, sim::kTeRhtSignMask, y),
      Catch::Contains("rows = 5 must be a multiple of 16"));
}

// Inputs for the lanes-vs-scalar comparison, one magnitude per chunk so that the chunks span the
// range: 2^-140 (subnormal; left to the scalar model below 2^-99) to 2^127 (whose sums overflow to
// Inf, and whose bf16 rounding can reach Inf), zero chunks, bf16 ties (low 16 bits 0x8000), and a
// NaN or Inf in a few chunks.
std::vector<float> mixed_input(std::mt19937& rng, std::int64_t rows, std::int64_t cols,
                               RhtAxis axis) {
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  const std::int64_t outer = axis == RhtAxis::kRows ? cols : rows;
  const std::int64_t chunked = axis == RhtAxis::kRows ? rows : cols;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t c0 = 0; c0 < chunked; c0 += 16) {
      const unsigned kind = rng() % 16;
      const int exponent = kind == 0 ? -140 + static_cast<int>(rng() % 50)
                                     : (kind == 1 ? 120 + static_cast<int>(rng() % 8)
                                                  : static_cast<int>(rng() % 60) - 30);
      for (int i = 0; i < 16; ++i) {
        float v = std::ldexp(normal(rng), exponent);
        if (kind == 2) v = 0.0f;
        if (kind == 3 && i == 0) v = std::numeric_limits<float>::quiet_NaN();
        if (kind == 4 && i == 5) v = -std::numeric_limits<float>::infinity();
        if (kind == 5) {
          v = std::bit_cast<float>((std::bit_cast<std::uint32_t>(v) & 0xFFFF0000u) | 0x8000u);
        }
        if (kind == 6 && i == 3) v = std::numeric_limits<float>::max();
        if (kind == 7 && rng() % 2 == 0) v = 0.0f;
        const auto at = axis == RhtAxis::kRows ? (c0 + i) * cols + o : o * cols + c0 + i;
        x[static_cast<std::size_t>(at)] = v;
      }
    }
  }
  return x;
}

TEST_CASE("random_hadamard_transform_bf16's lanes give the scalar model's bits, every target") {
  std::mt19937 rng(46);
  for (const RhtAxis axis : {RhtAxis::kRows, RhtAxis::kCols}) {
    // 37 outer lanes: whole vectors and a tail on every target.
    const std::int64_t rows = axis == RhtAxis::kRows ? 64 : 37;
    const std::int64_t cols = axis == RhtAxis::kRows ? 37 : 64;
    const std::int64_t chunks = rows * cols / 16;
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<float> x = mixed_input(rng, rows, cols, axis);
      const auto sign_mask = trial == 0 ? sim::kTeRhtSignMask : static_cast<std::uint16_t>(rng());
      std::vector<float> expected(x.size()), lanes(x.size());
      sim::reference::random_hadamard_transform_bf16(x, rows, cols, axis, sign_mask, expected);
      std::size_t nonzero = 0;
      for (float v : expected) nonzero += v != 0.0f ? 1 : 0;
      REQUIRE(nonzero > expected.size() / 2);
      for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        INFO("target " << hwy::TargetName(target) << ", axis "
                       << (axis == RhtAxis::kRows ? "rows" : "cols") << ", trial " << trial);
        REQUIRE(std::string(sim::rht_target_name()) == hwy::TargetName(target));
        const std::int64_t left =
            sim::rht_detail::rht_lanes(x.data(), rows, cols, axis, sign_mask, lanes.data());
        CHECK(left < chunks / 2);  // the lanes ran on most chunks
        std::size_t mismatches = 0, first = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (std::bit_cast<std::uint32_t>(expected[i]) != std::bit_cast<std::uint32_t>(lanes[i])) {
            if (mismatches++ == 0) first = i;
          }
        }
        INFO("first mismatch at " << first << ": x " << x[first] << " expected " << expected[first]
                                  << " got " << lanes[first]);
        CHECK(mismatches == 0);
        std::vector<float> public_out(x.size());
        sim::random_hadamard_transform_bf16(x, rows, cols, axis, sign_mask, public_out);
        CHECK(std::equal(public_out.begin(), public_out.end(), lanes.begin(), [](float a, float b) {
          return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
        }));
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

}  // namespace
}  // namespace fp8lab::testing
