// Stochastic rounding (docs/numerics.md §1 `stochastic`, sim/quantize.hpp quantize_stochastic):
// reproducibility for a seed, independence of how a tensor is split (parts starting at any index,
// threads), equality with the scalar definition (the word of sim/rng.hpp's FP8 mapping, spelled out
// here on the known-answer-tested philox4x32_10, + cast_fp32_to_fp8_stochastic per element), and
// unbiasedness.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "sim/quantize.hpp"
#include "sim/rng.hpp"
#include "tests/sim/quantize_targets.hpp"

using namespace fp8lab::sim;

namespace {

std::vector<float> random_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> exponent(-22.0f, 17.0f);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = i % 5 == 0 ? std::bit_cast<float>(bits(rng))
                      : std::exp2(exponent(rng)) * (i % 2 ? -1.0f : 1.0f);
  }
  return v;
}

// The FP8 stream's word of element `index` written out from sim/rng.hpp's contract, on the
// generator itself (checked against Random123's vectors in rng_philox_test.cpp), not through
// philox_block_word: word index & 3 of the block at counter {index >> 2, stream} under the seed.
std::uint32_t definition_word(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t block = index / 4;
  const Philox4x32Block counter{{static_cast<std::uint32_t>(block & 0xFFFF'FFFFu),
                                 static_cast<std::uint32_t>(block >> 32),
                                 static_cast<std::uint32_t>(stream & 0xFFFF'FFFFu),
                                 static_cast<std::uint32_t>(stream >> 32)}};
  return philox4x32_10(counter, static_cast<std::uint32_t>(seed & 0xFFFF'FFFFu),
                       static_cast<std::uint32_t>(seed >> 32))
      .word[index % 4];
}
}  // namespace

TEST_CASE("quantize_stochastic equals the per-element definition on random data, every mode") {
  const std::vector<float> x = random_values(4099, 3);
  fp8lab::testing::for_each_simd_target([&] {
    for (const Format format : kFp8Formats) {
      for (const Overflow mode : kOverflowModes) {
        // First indices at each position within a Philox block (the bulk path starts its lanes
        // at the next block).
        for (const std::uint64_t first :
             {(1ull << 32) - 100, (1ull << 32) - 99, (1ull << 32) - 98, (1ull << 32) - 97}) {
          std::vector<std::uint8_t> q(x.size());
          const std::uint64_t seed = 0x1234'5678'9ABC'DEF0ull, stream = 77;
          const QuantizeStats s =
              quantize_stochastic(x, 0.75f, format, mode, seed, stream, first, q);
          std::vector<std::uint8_t> r(x.size());
          const QuantizeStats rs =
              reference::quantize_stochastic(x, 0.75f, format, mode, seed, stream, first, r);
          for (std::size_t i = 0; i < x.size(); ++i) {
            const std::uint32_t word = definition_word(seed, stream, first + i);
            const std::uint8_t want = cast_fp32_to_fp8_stochastic(x[i] * 0.75f, format, mode, word);
            if (q[i] != want || r[i] != want) {
              FAIL(spec(format).name
                   << " " << to_string(mode) << " first " << first << " element " << i
                   << " x bits 0x" << std::hex << std::bit_cast<std::uint32_t>(x[i]) << ": bulk 0x"
                   << int{q[i]} << ", reference 0x" << int{r[i]} << ", definition 0x" << int{want});
            }
          }
          CHECK(s.count == x.size());
          CHECK(s.saturated == rs.saturated);
          CHECK(s.underflowed == rs.underflowed);
          CHECK(s.nan == rs.nan);
          CHECK(std::bit_cast<std::uint32_t>(s.amax) == std::bit_cast<std::uint32_t>(rs.amax));
        }
      }
    }
  });
}

// The vectorized Philox (sim/philox-inl.h PhiloxLanes) runs its first two rounds on scalars made
// of the stream's two words, the index's high word and the seed's two words; a word of each that
// is zero or small would hide a mixed-up word. Every word here is distinct and uses all 32 bits,
// each block counter's high word among them (index >> 2), and the block counter's low word wraps
// inside the span (the second and third firsts; the third also wraps the index past 2^64).
// The data: random_values (most vectors have lanes in the subnormal range) and values of
// [2^-6, 2^8), in E4M3's normal range, whose vectors skip the kernel's subnormal path.
TEST_CASE("quantize_stochastic: the FP8 stream's words for wide seeds, streams, indices") {
  std::vector<float> x = random_values(1000, 9);
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> exponent(-6.0f, 8.0f);
  for (int i = 0; i < 1000; ++i) x.push_back(std::exp2(exponent(rng)) * (i % 3 ? 1.0f : -1.0f));
  const std::uint64_t seeds[] = {0x0123'4567'89AB'CDEFull, 0xFFFF'FFFF'FFFF'FFFFull, 0};
  const std::uint64_t streams[] = {0xDEAD'BEEF'1234'5678ull, 0xFFFF'FFFF'0000'0001ull, 3};
  const std::uint64_t firsts[] = {0x9876'5432'0000'0011ull, 0x0000'0007'FFFF'FE00ull,
                                  0xFFFF'FFFF'FFFF'FC00ull};
  fp8lab::testing::for_each_simd_target([&] {
    for (const std::uint64_t seed : seeds) {
      for (const std::uint64_t stream : streams) {
        for (const std::uint64_t first : firsts) {
          std::vector<std::uint8_t> q(x.size());
          quantize_stochastic(x, 1.0f, Format::E4M3, Overflow::kSatFinite, seed, stream, first, q);
          for (std::size_t i = 0; i < x.size(); ++i) {
            const std::uint32_t word = definition_word(seed, stream, first + i);
            const std::uint8_t want =
                cast_fp32_to_fp8_stochastic(x[i], Format::E4M3, Overflow::kSatFinite, word);
            if (q[i] != want) {
              FAIL("seed 0x" << std::hex << seed << ", stream 0x" << stream << ", index 0x"
                             << first + i << ": bulk 0x" << int{q[i]} << ", definition 0x"
                             << int{want});
            }
          }
        }
      }
    }
  });
}

// Vectors with no NaN and no overflow take the lanes' short path, which counts underflows in lanes;
// the data: magnitudes 2^-30 .. 2^7 (underflows, subnormals, normals of E4M3 and E5M2) and zeros
// of both signs, then one NaN and one Inf near the end (the other path, in the same call).
TEST_CASE("quantize_stochastic statistics on in-range data equal the reference's") {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> exponent(-30.0f, 7.0f);
  std::vector<float> x(20'000);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 97 == 0 ? (i % 2 ? -0.0f : 0.0f) : std::exp2(exponent(rng)) * (i % 3 ? 1.0f : -1.0f);
  }
  x[19'990] = std::nanf("");
  x[19'991] = INFINITY;
  fp8lab::testing::for_each_simd_target([&] {
    for (const Format format : kFp8Formats) {
      for (const std::size_t n : {std::size_t{19'000}, x.size()}) {
        const std::span<const float> xs(x.data(), n);
        std::vector<std::uint8_t> q(n), r(n);
        const QuantizeStats s =
            quantize_stochastic(xs, 1.0f, format, Overflow::kSatFinite, 5, 6, 3, q);
        const QuantizeStats rs =
            reference::quantize_stochastic(xs, 1.0f, format, Overflow::kSatFinite, 5, 6, 3, r);
        INFO(spec(format).name << ", " << n << " elements");
        CHECK(q == r);
        CHECK(s.underflowed == rs.underflowed);
        CHECK(s.underflowed > 0);  // the data reaches the counter this checks
        CHECK(s.saturated == rs.saturated);
        CHECK(s.nan == rs.nan);
        CHECK(s.nan == (n == x.size() ? 1u : 0u));
        CHECK(std::bit_cast<std::uint32_t>(s.amax) == std::bit_cast<std::uint32_t>(rs.amax));
      }
    }
  });
}

TEST_CASE("quantize_stochastic is reproducible for a seed and independent of the split") {
  const std::vector<float> x = random_values(10'000, 5);
  std::vector<std::uint8_t> whole(x.size()), again(x.size()), other(x.size());
  const std::span<const float> xs(x);
  const auto part = [&](std::size_t begin, std::size_t end, std::vector<std::uint8_t>& out) {
    return quantize_stochastic(xs.subspan(begin, end - begin), 1.0f, Format::E4M3,
                               Overflow::kSatFinite, 42, 7, begin,
                               std::span(out).subspan(begin, end - begin));
  };
  fp8lab::testing::for_each_simd_target([&] {
    quantize_stochastic(xs, 1.0f, Format::E4M3, Overflow::kSatFinite, 42, 7, 0, whole);
    quantize_stochastic(xs, 1.0f, Format::E4M3, Overflow::kSatFinite, 42, 7, 0, again);
    CHECK(whole == again);
    // Uneven parts, each told where it starts in the tensor: starts at 1, 2, 3 and 5 (1, 2, 3 and
    // 1 mod 4, inside a Philox block), then at 4102 (2 mod 4) and 9999 (3 mod 4).
    std::vector<std::uint8_t> parts(x.size());
    QuantizeStats merged;
    const std::size_t bounds[] = {0, 1, 2, 3, 5, 4102, 9999, 10'000};
    for (std::size_t p = 0; p + 1 < std::size(bounds); ++p) {
      merged.merge(part(bounds[p], bounds[p + 1], parts));
    }
    CHECK(parts == whole);
    CHECK(merged.count == x.size());
    // Threads: t threads, each quantizing its own slice (boundaries at i * n / t + i, most not
    // multiples of 4), for several thread counts.
    for (const std::size_t t : {1, 2, 3, 5, 8}) {
      std::vector<std::uint8_t> threaded(x.size());
      std::vector<std::thread> workers;
      for (std::size_t k = 0; k < t; ++k) {
        const std::size_t begin = k == 0 ? 0 : k * x.size() / t + k;
        const std::size_t end = k + 1 == t ? x.size() : (k + 1) * x.size() / t + k + 1;
        workers.emplace_back([&, begin, end] { part(begin, end, threaded); });
      }
      for (std::thread& w : workers) w.join();
      INFO(t << " threads");
      CHECK(threaded == whole);
    }
  });
  // Guards: the seed, the stream and the index each change the bytes (so the checks above can
  // fail).
  quantize_stochastic(xs, 1.0f, Format::E4M3, Overflow::kSatFinite, 43, 7, 0, other);
  CHECK(other != whole);
  quantize_stochastic(xs, 1.0f, Format::E4M3, Overflow::kSatFinite, 42, 8, 0, other);
  CHECK(other != whole);
  quantize_stochastic(xs, 1.0f, Format::E4M3, Overflow::kSatFinite, 42, 7, 1, other);
  CHECK(other != whole);
}

// Unbiasedness. For x strictly between neighbouring FP8 values lo < hi, stochastic rounding must
// round up with probability p = (x - lo) / (hi - lo) exactly (the random value covers exactly the
// dropped bits). We quantize N = 2^20 copies of x (each element draws its own word; four words
// of one Philox block per four elements) and
// compare the observed frequency f of `hi` with p:
//   |f - p| <= 6 * sqrt(p (1 - p) / N)      (6 sigma: a correct implementation fails with
//                                            probability ~2e-9 per case; the seeds are fixed)
// Why this discriminates, for the p values below (sigma <= 0.5 / 2^10 ~ 4.9e-4, so the bound is
// at most 2.9e-3 and, for p = 2^-10, 1.9e-4):
// - round-to-nearest gives f = 0 or 1: |f - p| >= min(p, 1 - p) >= 2^-10 ~ 9.8e-4 > 1.9e-4 for
//   the smallest p, and >= 0.25 for the others;
// - one random bit too many (r < 2^(k+1) added below k dropped bits) rounds up with probability
//   (1 + p) / 2: off by (1 - p) / 2 >= 0.125;
// - one bit too few (r < 2^(k-1)) rounds up with probability max(0, 2p - 1): off by p for
//   p <= 1/2 and by 1 - p otherwise, >= 2^-10 (against a bound of 1.9e-4 at p = 2^-10);
// - truncation (no random bits) gives f = 0.
TEST_CASE("stochastic rounding is unbiased: P(round up) = distance fraction, within 6 sigma") {
  constexpr std::size_t kN = std::size_t{1} << 20;
  struct Case {
    Format format;
    std::uint8_t lo;  // code of the lower neighbour (positive)
    double p;         // fraction of the way to the next code
  };
  const Case cases[] = {
      {Format::E4M3, 0x38, 0.25},          // 1.0 .. 1.125, normal range
      {Format::E4M3, 0x3F, 0.5},           // 1.875 .. 2.0: the step into the next binade
      {Format::E4M3, 0x38, 1.0 / 1024.0},  // a small fraction: catches a missing low bit
      {Format::E4M3, 0x03, 0.75},          // subnormals 3 * 2^-9 .. 4 * 2^-9 (more dropped bits)
      {Format::E4M3, 0x07, 0.375},         // largest subnormal .. smallest normal
      {Format::E4M3, 0x00, 0.5},           // 0 .. smallest subnormal
      {Format::E5M2, 0x3C, 0.625},         // 1.0 .. 1.25
      {Format::E5M2, 0x01, 0.25},          // subnormals
      {Format::E5M2, 0x7A, 0.125},         // 49152 .. 57344, just below max
  };
  for (const Case& c : cases) {
    const float lo = decode_fp8(c.lo, c.format);
    const float hi = decode_fp8(static_cast<std::uint8_t>(c.lo + 1), c.format);
    const float x = lo + static_cast<float>(c.p) * (hi - lo);  // exact: p has few bits
    REQUIRE((static_cast<double>(x) - lo) / (static_cast<double>(hi) - lo) == c.p);
    for (const float sign : {1.0f, -1.0f}) {
      const std::vector<float> values(kN, sign * x);
      std::vector<std::uint8_t> q(kN);
      quantize_stochastic(values, 1.0f, c.format, Overflow::kSatFinite, 2026, c.lo, 0, q);
      std::size_t up = 0, other = 0;
      for (const std::uint8_t code : q) {
        const float v = std::fabs(decode_fp8(code, c.format));
        if (v == hi) {
          ++up;
        } else if (v != lo) {
          ++other;
        }
      }
      const double f = static_cast<double>(up) / kN;
      const double bound = 6.0 * std::sqrt(c.p * (1.0 - c.p) / kN);
      INFO(spec(c.format).name << " x = " << sign * x << " between " << lo << " and " << hi
                               << ": P(up) expected " << c.p << ", observed " << f << ", bound "
                               << bound);
      CHECK(other == 0);
      CHECK(std::fabs(f - c.p) <= bound);
    }
  }
}

TEST_CASE("stochastic cast: below 2^(emin_subnormal - 8) nothing rounds up (documented limit)") {
  // cast.hpp: with 32 random bits, a value whose significand would be shifted by 32 or more has no
  // random bit left to reach the smallest subnormal. 2^(emin_sub - 8) is the smallest power of two
  // that can still round up (with all random bits set); half of it cannot.
  for (const Format format : kFp8Formats) {
    const int emin_sub = spec(format).min_subnormal_exponent();
    const float lowest_that_can = std::ldexp(1.0f, emin_sub - 8);
    INFO(spec(format).name);
    // Its significand 2^23 is shifted by 31: it rounds up exactly when the low 31 random bits are
    // >= 2^31 - 2^23, i.e. with probability 2^-8 = its distance to 0 in smallest subnormals.
    CHECK(cast_fp32_to_fp8_stochastic(lowest_that_can, format, Overflow::kSatFinite,
                                      0x7F80'0000u) == 0x01);
    CHECK(cast_fp32_to_fp8_stochastic(lowest_that_can, format, Overflow::kSatFinite,
                                      0x7F7F'FFFFu) == 0x00);
    CHECK(cast_fp32_to_fp8_stochastic(lowest_that_can / 2.0f, format, Overflow::kSatFinite, ~0u) ==
          0x00);
    CHECK(cast_fp32_to_fp8_stochastic(-lowest_that_can / 2.0f, format, Overflow::kSatFinite, ~0u) ==
          0x80);
  }
}
