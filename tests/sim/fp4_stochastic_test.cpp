// E2M1 stochastic rounding (sim/fp4_stochastic.hpp): the rule on chosen bytes, the Philox stream
// mapping, reproducibility, unbiasedness measured statistically, and the Highway lanes against the
// scalar rule on every SIMD target. The Philox4x32-10 generator
// itself is checked against Random123's known-answer vectors in rng_philox_test.cpp.
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <hwy/targets.h>

#include <catch2/catch.hpp>
#include <string>

#include "sim/cast.hpp"
#include "sim/format.hpp"
#include "sim/fp4_stochastic.hpp"
#include "sim/rng.hpp"

namespace fp8lab::testing {
namespace {

using sim::Format;

float sr(float x, std::uint8_t byte) {
  return sim::decode_subbyte(sim::e2m1_stochastic_code(x, byte), Format::E2M1);
}

float step_of(float magnitude) { return magnitude < 2 ? 0.5f : (magnitude < 4 ? 1.0f : 2.0f); }

TEST_CASE("the rule on chosen bytes: u = byte / 256 of the step") {
  CHECK(sr(1.9f, 0) == 1.5f);      // u = 0: down
  CHECK(sr(1.9f, 255) == 2.0f);    // t = 1.9 + 0.498 crosses 2
  CHECK(sr(1.75f, 127) == 1.5f);   // t = 1.998
  CHECK(sr(1.75f, 128) == 2.0f);   // t = 2.0
  CHECK(sr(3.0f, 255) == 3.0f);    // representable values never move
  CHECK(sr(-4.5f, 192) == -6.0f);  // step 2: u * 2 = 1.5 >= 1.5
  CHECK(sr(-4.5f, 191) == -4.0f);
  CHECK(sr(5.99f, 255) == 6.0f);
  CHECK(sr(7.0f, 0) == 6.0f);  // saturates
  CHECK(sr(-std::numeric_limits<float>::infinity(), 0) == -6.0f);
  CHECK(sim::e2m1_stochastic_code(std::numeric_limits<float>::quiet_NaN(), 3) == 0x7);
  CHECK(sim::e2m1_stochastic_code(-0.2f, 0) == 0x8);  // -0 keeps its sign
  CHECK(sr(0.2f, 154) == 0.5f);                       // 0.2 + 0.3008 >= 0.5
  CHECK(sr(0.2f, 153) == 0.0f);                       // 0.2 + 0.2988 < 0.5
}

TEST_CASE("element i takes byte i % 4 of the Philox word i / 4; the stream is reproducible") {
  for (std::uint64_t i = 0; i < 64; ++i) {
    const std::uint32_t word = sim::philox_random_word(0x1234, 9, i / 4);
    CHECK(sim::e2m1_stochastic_byte(0x1234, 9, i) == ((word >> (8 * (i % 4))) & 0xFF));
  }
  std::vector<float> x(1000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.013f * static_cast<float>(i) - 6.5f;
  std::vector<std::uint8_t> a(x.size()), b(x.size()), c(x.size());
  sim::e2m1_stochastic_codes(x, 42, 1, 0, a);
  sim::e2m1_stochastic_codes(x, 42, 1, 0, b);
  sim::e2m1_stochastic_codes(x, 43, 1, 0, c);
  CHECK(a == b);
  CHECK(a != c);
  // A part of the tensor from its first index draws the same bytes.
  std::vector<std::uint8_t> tail(500);
  sim::e2m1_stochastic_codes(std::span<const float>(x).subspan(500), 42, 1, 500, tail);
  CHECK(std::equal(tail.begin(), tail.end(), a.begin() + 500));
  CHECK_THROWS_AS(sim::e2m1_stochastic_codes(x, 42, 1, 0, tail), std::invalid_argument);
}

TEST_CASE("unbiased: the mean of 2^16 roundings is within 5 standard errors of its expectation") {
  // For each x: E[q] over the 256 equally likely bytes, exactly (by enumeration). The rule's only
  // bias is the byte's 1/256 resolution: |E[q] - x| <= step / 256. The sample mean of n = 2^16
  // roundings with the Philox stream has standard error sigma = step * sqrt(p (1 - p) / n), p the
  // probability of rounding up; |mean - E[q]| <= 5 sigma fails for a correct generator with
  // probability below 6e-7 per x (normal tail; n p (1 - p) >= 600 here), 1e-5 over the 16 values.
  const float xs[] = {0.1f, 0.3f, 0.7f, 0.9f, 1.3f, 1.75f, 1.99f, 2.2f,
                      2.6f, 3.5f, 4.1f, 4.9f, 5.5f, -0.4f, -3.3f, -5.01f};
  constexpr std::uint64_t kN = 1 << 16;
  for (std::size_t v = 0; v < std::size(xs); ++v) {
    const float x = xs[v];
    const float step = step_of(std::fabs(x));
    double expected = 0.0;
    for (int byte = 0; byte < 256; ++byte) expected += sr(x, static_cast<std::uint8_t>(byte));
    expected /= 256.0;
    INFO("x = " << x << ", E[q] = " << expected);
    CHECK(std::fabs(expected - x) <= step / 256.0 + 1e-7);
    const double down = std::trunc(std::fabs(x) / step) * step;
    const double p = (std::fabs(expected) - down) / step;
    double sum = 0.0;
    for (std::uint64_t i = 0; i < kN; ++i) sum += sr(x, sim::e2m1_stochastic_byte(2024, v, i));
    const double mean = sum / kN;
    const double sigma = step * std::sqrt(p * (1 - p) / kN);
    INFO("mean = " << mean << ", sigma = " << sigma);
    CHECK(std::fabs(mean - expected) <= 5 * sigma);
  }
}

TEST_CASE("e2m1_stochastic_codes' lanes give the scalar rule's bits, every target") {
  // Values around every step and threshold (exact E2M1 values, their neighbours, 6 and beyond),
  // +-0, +-Inf, NaN, subnormals and random normals; starts that are not a multiple of 4 and a
  // start whose word index's low half wraps inside a vector.
  std::mt19937 rng(46);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const float picks[] = {0.0f,
                         -0.0f,
                         0.25f,
                         0.5f,
                         1.0f,
                         1.5f,
                         2.0f,
                         3.0f,
                         4.0f,
                         6.0f,
                         6.5f,
                         1e30f,
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::denorm_min()};
  std::vector<float> values(1000);
  for (auto& v : values) {
    const unsigned kind = rng() % 4;
    v = kind == 0 ? picks[rng() % std::size(picks)] : normal(rng);
    if (kind == 1) v = std::nextafter(picks[rng() % 10], rng() % 2 ? 10.0f : -10.0f);
    if (rng() % 2 == 0) v = -v;
  }
  // Lengths that end in a partial vector of words (the padded tail) on every target, or in fewer
  // than 4 elements (the scalar tail).
  for (const std::size_t length : {std::size_t{1000}, std::size_t{61}, std::size_t{7}}) {
    const std::vector<float> x(values.begin(),
                               values.begin() + static_cast<std::ptrdiff_t>(length));
    for (const std::uint64_t first :
         {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{4 * 0xFFFFFFF0ull + 1}}) {
      INFO("length " << length);
      std::vector<std::uint8_t> expected(x.size()), lanes(x.size());
      sim::reference::e2m1_stochastic_codes(x, 7, 9, first, expected);
      for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        INFO("target " << hwy::TargetName(target) << ", first index " << first);
        REQUIRE(std::string(sim::e2m1_stochastic_target_name()) == hwy::TargetName(target));
        sim::e2m1_stochastic_codes(x, 7, 9, first, lanes);
        std::size_t mismatches = 0, at = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          if (expected[i] != lanes[i] && mismatches++ == 0) at = i;
        }
        INFO("first mismatch at " << at << ": x " << x[at] << " expected " << int{expected[at]}
                                  << " got " << int{lanes[at]});
        CHECK(mismatches == 0);
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

}  // namespace
}  // namespace fp8lab::testing
