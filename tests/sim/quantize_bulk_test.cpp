// The vectorized bulk paths of sim/quantize.hpp against the scalar reference (reference::quantize,
// one sim/cast.hpp cast per element), byte for byte and statistic for statistic, on every SIMD
// target Highway compiled that this CPU runs (one test body for every backend, STYLE.md §9):
// every format x overflow mode x scale, fp32 and bf16 input, random and adversarial data (NaN,
// ±Inf, ±0, fp32 subnormals, every FP8 value, every midpoint between neighbouring FP8 values and
// the fp32 values next to it), and lengths that leave a scalar tail.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/quantize.hpp"
#include "tests/sim/float_bits.hpp"
#include "tests/sim/quantize_targets.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::testing;

namespace {
// Exact power-of-two scales keep the boundaries of `adversarial_fp32` on the boundaries; the
// others put x * scale through an inexact multiply, 0 makes ±Inf * 0 = NaN, 2^100 overflows,
// -0.5 flips signs; ±Inf and NaN scales take the scalar path, which this checks too.
const float kScales[] = {1.0f,
                         0.125f,
                         4.0f,
                         0.7f,
                         3.0f,
                         0.0f,
                         std::ldexp(1.0f, 100),
                         -0.5f,
                         std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN()};

void push_both_signs(std::vector<float>& v, float x) {
  v.push_back(x);
  v.push_back(-x);
}

// Every FP8 value of both formats, each midpoint to its neighbour (including the midpoint past
// max, where overflow starts), the fp32 values adjacent to each, and the special values.
std::vector<float> adversarial_fp32() {
  std::vector<float> v;
  for (const Format format : kFp8Formats) {
    const FormatSpec& f = spec(format);
    for (std::uint32_t code = 0; code <= f.max_finite_code(); ++code) {
      const float value = decode_fp8(static_cast<std::uint8_t>(code), format);
      const float step = code == f.max_finite_code()
                             ? value - decode_fp8(static_cast<std::uint8_t>(code - 1), format)
                             : decode_fp8(static_cast<std::uint8_t>(code + 1), format) - value;
      const float midpoint = value + step / 2.0f;
      for (const float x : {value, midpoint}) {
        push_both_signs(v, x);
        push_both_signs(v, std::nextafter(x, kInf));
        push_both_signs(v, std::nextafter(x, 0.0f));
      }
    }
  }
  for (const std::uint32_t bits :
       {0x0000'0001u, 0x0040'0000u, 0x007F'FFFFu, 0x0080'0000u, 0x7F7F'FFFFu, 0x7F80'0000u,
        0x7F80'0001u, 0x7FC0'0000u, 0x7FFF'FFFFu}) {
    push_both_signs(v, std::bit_cast<float>(bits));
  }
  push_both_signs(v, 0.0f);
  return v;
}

// Uniform bit patterns (every exponent, NaN included) mixed with values near FP8's range.
std::vector<float> random_fp32(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::uniform_real_distribution<float> exponent(-20.0f, 18.0f);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = i % 2 == 0 ? std::bit_cast<float>(bits(rng))
                      : std::exp2(exponent(rng)) * (bits(rng) % 2 == 0 ? 1.0f : -1.0f);
  }
  return v;
}

std::string describe_stats(const QuantizeStats& s) {
  char line[200];
  std::snprintf(
      line, sizeof line, "amax 0x%08X count %llu saturated %llu underflowed %llu nan %llu",
      std::bit_cast<std::uint32_t>(s.amax), static_cast<unsigned long long>(s.count),
      static_cast<unsigned long long>(s.saturated), static_cast<unsigned long long>(s.underflowed),
      static_cast<unsigned long long>(s.nan));
  return line;
}

unsigned input_bits(float x) { return std::bit_cast<std::uint32_t>(x); }
unsigned input_bits(std::uint16_t x) { return x; }

template <typename T, typename Bulk, typename Reference>
void check_equal(const std::vector<T>& x, const char* what, Bulk bulk, Reference reference) {
  for (const Format format : kFp8Formats) {
    for (const Overflow mode : kOverflowModes) {
      for (const float scale : kScales) {
        std::vector<std::uint8_t> got(x.size()), want(x.size());
        const QuantizeStats got_stats =
            bulk(std::span<const T>(x), scale, format, mode, std::span(got));
        const QuantizeStats want_stats =
            reference(std::span<const T>(x), scale, format, mode, std::span(want));
        std::size_t first = 0;
        while (first < x.size() && got[first] == want[first]) ++first;
        INFO(what << " on " << bulk_target_name() << ", " << spec(format).name << " "
                  << to_string(mode) << ", scale " << scale << ", n " << x.size());
        if (first < x.size()) {
          char line[160];
          std::snprintf(line, sizeof line,
                        "element %zu, input bits 0x%08X: bulk 0x%02X, scalar 0x%02X", first,
                        input_bits(x[first]), got[first], want[first]);
          FAIL(line);
        }
        INFO("bulk:   " << describe_stats(got_stats) << "\nscalar: " << describe_stats(want_stats));
        CHECK(std::bit_cast<std::uint32_t>(got_stats.amax) ==
              std::bit_cast<std::uint32_t>(want_stats.amax));
        CHECK(got_stats.count == want_stats.count);
        CHECK(got_stats.saturated == want_stats.saturated);
        CHECK(got_stats.underflowed == want_stats.underflowed);
        CHECK(got_stats.nan == want_stats.nan);
      }
    }
  }
}

const auto kBulkF32 = [](auto... args) { return quantize(args...); };
const auto kReferenceF32 = [](auto... args) { return reference::quantize(args...); };
const auto kBulkBF16 = [](auto... args) { return quantize_bf16(args...); };
const auto kReferenceBF16 = [](auto... args) { return reference::quantize_bf16(args...); };

}  // namespace

TEST_CASE("bulk quantize (fp32) equals the scalar reference on adversarial inputs, every target") {
  std::vector<float> x = adversarial_fp32();
  // Shuffle so that each special value meets every lane position.
  std::shuffle(x.begin(), x.end(), std::mt19937(20261130));
  fp8lab::testing::for_each_simd_target(
      [&] { check_equal(x, "adversarial fp32", kBulkF32, kReferenceF32); });
}

TEST_CASE("bulk quantize (fp32) equals the scalar reference on random inputs and odd lengths") {
  fp8lab::testing::for_each_simd_target([&] {
    for (const std::size_t n : {0, 1, 7, 15, 16, 17, 33, 1000, 4099}) {
      const std::vector<float> x = random_fp32(n, static_cast<std::uint32_t>(n) + 1);
      check_equal(x, "random fp32", kBulkF32, kReferenceF32);
    }
  });
}

TEST_CASE("bulk quantize_bf16 equals the scalar reference on all 2^16 bf16 patterns") {
  std::vector<std::uint16_t> x(1u << 16);
  for (std::uint32_t b = 0; b < x.size(); ++b) x[b] = static_cast<std::uint16_t>(b);
  std::shuffle(x.begin(), x.end(), std::mt19937(16));
  x.resize(x.size() - 3);  // and a tail; the three missing patterns come back below
  fp8lab::testing::for_each_simd_target(
      [&] { check_equal(x, "all bf16", kBulkBF16, kReferenceBF16); });
  const std::vector<std::uint16_t> rest(x.end() - 3, x.end());
  fp8lab::testing::for_each_simd_target(
      [&] { check_equal(rest, "bf16 tail", kBulkBF16, kReferenceBF16); });
}

TEST_CASE("bulk amax and amax_bf16 equal a NaN-skipping max loop, signalling NaNs included") {
  std::vector<float> x = adversarial_fp32();
  std::shuffle(x.begin(), x.end(), std::mt19937(7));
  std::vector<float> finite;
  for (const float v : x) {
    if (std::isfinite(v)) finite.push_back(v);
  }
  std::vector<std::uint16_t> bf16;
  for (const float v : x)
    bf16.push_back(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16));
  auto scalar = [](const auto& values, auto to_float) {
    float m = 0.0f;
    for (const auto v : values) {
      if (!std::isnan(to_float(v))) m = std::max(m, std::fabs(to_float(v)));
    }
    return m;
  };
  fp8lab::testing::for_each_simd_target([&] {
    CHECK(amax(x) == kInf);
    CHECK(amax(finite) == scalar(finite, [](float v) { return v; }));
    CHECK(amax(finite) == std::numeric_limits<float>::max());
    CHECK(amax_bf16(bf16) == scalar(bf16, bf16_to_fp32));
    const std::vector<float> nans(37, std::numeric_limits<float>::quiet_NaN());
    CHECK(std::bit_cast<std::uint32_t>(amax(nans)) == 0u);
  });
}
