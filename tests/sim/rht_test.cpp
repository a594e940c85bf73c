// The random Hadamard transform (sim/rht.hpp): TE's sign vector, the Sylvester matrix, the bf16
// tensor-core arithmetic (truncation to 25 fraction bits, RZ to fp32, RN to bf16), layouts and
// errors. Bit-exact against MMA-Sim's bf16 MMA: tests/python/test_block_scaled_mmasim.py.
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/cast.hpp"
#include "sim/rht.hpp"

namespace fp8lab::testing {
namespace {

using sim::RhtAxis;

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
  std::vector<float> x(rows * cols), xt(rows * cols), y(rows * cols), yt(rows * cols);
  for (auto& v : x) v = normal(rng);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) xt[c * rows + r] = x[r * cols + c];
  }
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

}  // namespace
}  // namespace fp8lab::testing
