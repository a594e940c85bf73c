// sim/quantize.hpp: the reference loop's codes and statistics on hand-checked elements, argument
// errors, and the public entry points against the reference (fast; the vectorized paths get their
// own adversarial and exhaustive tests).
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "sim/quantize.hpp"
#include "tests/sim/float_bits.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::testing;

namespace {

// 448 is E4M3's max; 464 is the tie between 448 (0b0'1111'110, even) and the first value past
// max, 480 (0b0'1111'111, the NaN code), so RNE keeps 448 and the overflow rule does not apply;
// 465 rounds past max. 2^-10 is half E4M3's smallest subnormal 2^-9: a tie that goes to even 0.
const std::vector<float> kTrapInputs = {1.0f, 500.0f, -kInf,  kNaN,  std::ldexp(1.0f, -10),
                                        0.0f, 464.0f, 465.0f, -0.0f, -448.0f};

// kTrapInputs through the reference loop at scale 1 in E4M3: the codes and the statistics.
void check_trap_inputs(Overflow mode, const std::vector<std::uint8_t>& expected,
                       std::uint64_t saturated, std::uint64_t nan) {
  std::vector<std::uint8_t> out(kTrapInputs.size());
  const QuantizeStats s = reference::quantize(kTrapInputs, 1.0f, Format::E4M3, mode, out);
  INFO("E4M3 " << to_string(mode));
  CHECK(out == expected);
  CHECK(s.count == kTrapInputs.size());
  CHECK(s.saturated == saturated);
  CHECK(s.underflowed == 1);  // 2^-10
  CHECK(s.nan == nan);
  CHECK(s.amax == kInf);
}

}  // namespace

TEST_CASE("reference quantize: E4M3 satfinite codes and statistics") {
  // Saturated: 500, -Inf, 465; NaN: the NaN input.
  check_trap_inputs(Overflow::kSatFinite,
                    {0x38, 0x7E, 0xFE, 0x7F, 0x00, 0x00, 0x7E, 0x7E, 0x80, 0xFE}, 3, 1);
}

TEST_CASE("reference quantize: E4M3 nosat turns overflow into NaN and counts it") {
  // Saturated: 500, -Inf, 465 as in satfinite; NaN: the NaN input, 500, -Inf, 465.
  check_trap_inputs(Overflow::kNoSat, {0x38, 0x7F, 0xFF, 0x7F, 0x00, 0x00, 0x7E, 0x7F, 0x80, 0xFE},
                    3, 4);
}

TEST_CASE("reference quantize: E5M2 sat_keep_inf keeps Inf, saturates finite overflow") {
  // E5M2 max 57344 = 0b0'11110'11 (odd); the tie 61440 with 65536 rounds to even, past max.
  const std::vector<float> x = {61440.0f, 61439.99609375f, -kInf, 3.0f};
  std::vector<std::uint8_t> out(x.size());
  const QuantizeStats s = reference::quantize(x, 1.0f, Format::E5M2, Overflow::kSatKeepInf, out);
  const std::vector<std::uint8_t> expected = {0x7B, 0x7B, 0xFC, 0x42};
  CHECK(out == expected);
  CHECK(s.saturated == 2);  // 61440 and -Inf; 61439.996 rounds down to max
  CHECK(s.nan == 0);
}

TEST_CASE("reference quantize: the scale multiplies in fp32 before the cast, amax is unscaled") {
  const std::vector<float> x = {3.0f, -kNaN, -7.0f};
  std::vector<std::uint8_t> out(x.size());
  const QuantizeStats s = reference::quantize(x, 0.5f, Format::E4M3, Overflow::kSatFinite, out);
  CHECK(out[0] == cast_fp32_to_fp8(1.5f, Format::E4M3, Overflow::kSatFinite));
  CHECK(out[2] == cast_fp32_to_fp8(-3.5f, Format::E4M3, Overflow::kSatFinite));
  CHECK(s.amax == 7.0f);
  // x != 0 whose product underflows to 0 in fp32 counts as underflowed.
  const std::vector<float> tiny = {std::ldexp(1.0f, -140)};
  std::vector<std::uint8_t> one(1);
  CHECK(reference::quantize(tiny, std::ldexp(1.0f, -20), Format::E5M2, Overflow::kNoSat, one)
            .underflowed == 1);
}

TEST_CASE("reference quantize_bf16 equals quantize of the exact fp32 values") {
  std::vector<std::uint16_t> bits;
  for (std::uint32_t b = 0; b < 0x10000; b += 7) bits.push_back(static_cast<std::uint16_t>(b));
  std::vector<float> values;
  for (const std::uint16_t b : bits) values.push_back(bf16_to_fp32(b));
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf}) {
      std::vector<std::uint8_t> a(bits.size()), b(bits.size());
      const QuantizeStats sa = reference::quantize_bf16(bits, 2.0f, format, mode, a);
      const QuantizeStats sb = reference::quantize(values, 2.0f, format, mode, b);
      CHECK(a == b);
      CHECK(sa.saturated == sb.saturated);
      CHECK(sa.underflowed == sb.underflowed);
      CHECK(sa.nan == sb.nan);
      CHECK(std::bit_cast<std::uint32_t>(sa.amax) == std::bit_cast<std::uint32_t>(sb.amax));
    }
  }
}

TEST_CASE("quantize rejects mismatched sizes and non-FP8 formats, naming the argument") {
  const std::vector<float> x(4, 1.0f);
  std::vector<std::uint8_t> short_out(3), out(4);
  CHECK_THROWS_WITH(quantize(x, 1.0f, Format::E4M3, Overflow::kSatFinite, short_out),
                    Catch::Contains("out.size() = 3") && Catch::Contains("x.size() = 4"));
  CHECK_THROWS_WITH(quantize(x, 1.0f, Format::E8M0, Overflow::kSatFinite, out),
                    Catch::Contains("format = e8m0") && Catch::Contains("e4m3, e5m2"));
  CHECK_THROWS_AS(quantize_stochastic(x, 1.0f, Format::BF16, Overflow::kNoSat, 1, 2, 0, out),
                  std::invalid_argument);
}

TEST_CASE("amax ignores every NaN (as CUDA fmaxf) and sees infinities") {
  CHECK(amax(std::vector<float>{}) == 0.0f);
  CHECK(amax(std::vector<float>{kNaN, -kNaN}) == 0.0f);
  CHECK(amax(std::vector<float>{kNaN, -3.0f, 2.0f}) == 3.0f);
  CHECK(amax(std::vector<float>{1.0f, -kInf}) == kInf);
  CHECK(amax_bf16(std::vector<std::uint16_t>{0xC040, 0x7FC0, 0x3F80}) == 3.0f);  // -3, NaN, 1
  // Signalling NaNs too, where glibc's std::fmax would return NaN (quantize.hpp, amax_update).
  const float signalling = std::bit_cast<float>(0xFF80'0001u);
  CHECK(amax(std::vector<float>{2.0f, signalling, 1.0f}) == 2.0f);
  CHECK(amax_bf16(std::vector<std::uint16_t>{0x4000, 0x7F81, 0x3F80}) == 2.0f);  // 2, sNaN, 1
  std::vector<std::uint8_t> out(3);
  CHECK(reference::quantize(std::vector<float>{2.0f, signalling, 1.0f}, 1.0f, Format::E4M3,
                            Overflow::kSatFinite, out)
            .amax == 2.0f);
}

TEST_CASE("QuantizeStats::merge adds counts and takes the fmaxf of amax") {
  QuantizeStats a{2.0f, 3, 1, 0, 1};
  const QuantizeStats b{kNaN, 4, 0, 2, 0};
  a.merge(b);
  CHECK(a.amax == 2.0f);
  CHECK(a.count == 7);
  CHECK(a.saturated == 1);
  CHECK(a.underflowed == 2);
  CHECK(a.nan == 1);
}
