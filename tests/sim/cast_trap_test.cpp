// Named trap tests for the scalar casts (STYLE.md §4, after ml_dtypes tests/float8_test.cc): the
// inputs where a converter that is right "almost everywhere" goes wrong. The exhaustive oracle
// tests cover every input; these name the reason for each hard case and run in milliseconds.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "sim/cast.hpp"
#include "tests/sim/float_bits.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::testing;

namespace {
constexpr Overflow kAllModes[] = {Overflow::kSatFinite, Overflow::kNoSat, Overflow::kSatKeepInf};

std::uint8_t e4m3(float x, Overflow mode = Overflow::kSatFinite) {
  return cast_fp32_to_fp8(x, Format::E4M3, mode);
}
std::uint8_t e5m2(float x, Overflow mode = Overflow::kSatFinite) {
  return cast_fp32_to_fp8(x, Format::E5M2, mode);
}
}  // namespace

TEST_CASE("trap: ties at the subnormal boundary round to even") {
  // E4M3 subnormals are k * 2^-9 (k = 1..7), the smallest normal 2^-6 = 8 * 2^-9 (code 0x08).
  CHECK(e4m3(std::ldexp(0.5f, -9)) == 0x00);  // half the smallest subnormal: tie -> 0 (even)
  CHECK(e4m3(std::nextafter(std::ldexp(0.5f, -9), 1.0f)) == 0x01);  // just above the tie
  CHECK(e4m3(std::ldexp(1.5f, -9)) == 0x02);                        // tie between 1 and 2 -> 2
  CHECK(e4m3(std::ldexp(2.5f, -9)) == 0x02);                        // tie between 2 and 3 -> 2
  CHECK(e4m3(std::ldexp(7.5f, -9)) == 0x08);  // tie between the largest subnormal and 2^-6
  CHECK(e4m3(std::nextafter(std::ldexp(7.5f, -9), 0.0f)) == 0x07);
  // E5M2 subnormals are k * 2^-16 (k = 1..3), the smallest normal 2^-14 = 4 * 2^-16 (code 0x04).
  CHECK(e5m2(std::ldexp(0.5f, -16)) == 0x00);
  CHECK(e5m2(std::ldexp(3.5f, -16)) == 0x04);
  CHECK(e5m2(-std::ldexp(2.5f, -16)) == 0x82);
  // fp32 subnormals are far below both ranges: ±0 with the sign kept.
  CHECK(e4m3(std::bit_cast<float>(0x8000'0001u)) == 0x80);
}

TEST_CASE("trap: values just past max finite, per overflow mode") {
  // E4M3: max 448 = 0b0'1111'110. The next step, 480, would be 0b0'1111'111 = NaN; the tie 464
  // rounds to the even 448, anything above it overflows (torchao-mx.md §5.4: |x| > 464).
  const float e4m3_tie = 464.0f;
  const float past_e4m3 = std::nextafter(e4m3_tie, kInf);
  for (const Overflow mode : kAllModes) {
    INFO(to_string(mode));
    CHECK(e4m3(448.0f, mode) == 0x7E);
    CHECK(e4m3(e4m3_tie, mode) == 0x7E);
    CHECK(e4m3(-e4m3_tie, mode) == 0xFE);
  }
  CHECK(e4m3(past_e4m3, Overflow::kSatFinite) == 0x7E);
  CHECK(e4m3(past_e4m3, Overflow::kNoSat) == 0x7F);
  CHECK(e4m3(-past_e4m3, Overflow::kNoSat) == 0xFF);
  CHECK(e4m3(past_e4m3, Overflow::kSatKeepInf) == 0x7E);
  // E5M2: max 57344 = 0b0'11110'11 (odd mantissa), so the tie 61440 goes up to 65536 = Inf.
  const float e5m2_tie = 61440.0f;
  const float below_e5m2_tie = std::nextafter(e5m2_tie, 0.0f);
  for (const Overflow mode : kAllModes) CHECK(e5m2(below_e5m2_tie, mode) == 0x7B);
  CHECK(e5m2(e5m2_tie, Overflow::kSatFinite) == 0x7B);
  CHECK(e5m2(e5m2_tie, Overflow::kNoSat) == 0x7C);
  CHECK(e5m2(-e5m2_tie, Overflow::kNoSat) == 0xFC);
  CHECK(e5m2(e5m2_tie, Overflow::kSatKeepInf) == 0x7B);
  CHECK(e5m2(std::numeric_limits<float>::max(), Overflow::kSatKeepInf) == 0x7B);
}

TEST_CASE("trap: double rounding through a wider type") {
  // x = 1 + 2^-4 + 2^-20 lies just above the E4M3 tie 1.0625 between 1.0 (0x38) and 1.125 (0x39),
  // so one rounding gives 1.125. Rounding first to bf16 (7 mantissa bits) or fp16 (10) drops the
  // 2^-20 and lands exactly on the tie, which then goes to the even 1.0: the wrong answer.
  const float x = 1.0f + std::ldexp(1.0f, -4) + std::ldexp(1.0f, -20);
  CHECK(e4m3(x) == 0x39);
  // The trap is real: the two-step path gives the other byte.
  CHECK(e4m3(bf16_to_fp32(fp32_to_bf16(x))) == 0x38);
  CHECK(e4m3(fp16_to_fp32(fp32_to_fp16(x))) == 0x38);
  // E5M2 (2 mantissa bits): 1 + 2^-3 + 2^-20 is just above the tie between 1.0 and 1.25.
  const float y = 1.0f + std::ldexp(1.0f, -3) + std::ldexp(1.0f, -20);
  CHECK(e5m2(y) == 0x3D);
  CHECK(e5m2(bf16_to_fp32(fp32_to_bf16(y))) == 0x3C);
}

TEST_CASE("trap: -0 keeps its sign in every format and mode") {
  for (const Overflow mode : kAllModes) {
    CHECK(e4m3(-0.0f, mode) == 0x80);
    CHECK(e5m2(-0.0f, mode) == 0x80);
    CHECK(e4m3(0.0f, mode) == 0x00);
  }
  CHECK(std::signbit(decode_fp8(0x80, Format::E4M3)));
  CHECK(fp32_to_bf16(-0.0f) == 0x8000);
  CHECK(fp32_to_fp16(-0.0f) == 0x8000);
  // E8M0 has no sign and no zero: -0 encodes like +0, as the smallest code 2^-127.
  CHECK(encode_e8m0(-0.0f, E8M0Rounding::kUp) == 0x00);
  CHECK(encode_e8m0(-0.0f, E8M0Rounding::kDown) == 0x00);
}

TEST_CASE("trap: sat_keep_inf follows ml_dtypes' saturating conversion") {
  // torchao-mx.md §5.2 (ml_dtypes ConvertImpl with kSaturate = true, tests ConvertFromWithSaturation):
  // finite overflow -> ±max; Inf is never saturated: it becomes infinity(), which is Inf for
  // e5m2 and NaN (0x7F | sign) for e4m3fn.
  CHECK(e4m3(2.0f * 448.0f, Overflow::kSatKeepInf) == 0x7E);
  CHECK(e4m3(-2.0f * 448.0f, Overflow::kSatKeepInf) == 0xFE);
  CHECK(e4m3(kInf, Overflow::kSatKeepInf) == 0x7F);
  CHECK(e4m3(-kInf, Overflow::kSatKeepInf) == 0xFF);
  CHECK(e5m2(2.0f * 57344.0f, Overflow::kSatKeepInf) == 0x7B);
  CHECK(e5m2(kInf, Overflow::kSatKeepInf) == 0x7C);
  CHECK(e5m2(-kInf, Overflow::kSatKeepInf) == 0xFC);
  // The one documented difference: ml_dtypes keeps the NaN sign (e5m2 quiet NaN 0x7E | s); fp8lab
  // emits CUDA's canonical 0x7F for every NaN in every mode (docs/numerics.md §1, cast.hpp).
  CHECK(e5m2(-std::numeric_limits<float>::quiet_NaN(), Overflow::kSatKeepInf) == kFp8CanonicalNan);
}

TEST_CASE("trap: E8M0 encodes around 2^-127, 2^127 and non-powers of two") {
  // Code 0x00 is 2^-127 = fp32 0x0040'0000 (a subnormal); round-up of anything above it is 2^-126.
  CHECK(encode_e8m0(std::bit_cast<float>(0x0040'0000u), E8M0Rounding::kUp) == 0x00);
  CHECK(encode_e8m0(std::bit_cast<float>(0x0040'0001u), E8M0Rounding::kUp) == 0x01);
  CHECK(encode_e8m0(std::bit_cast<float>(0x007F'FFFFu), E8M0Rounding::kDown) == 0x00);
  CHECK(encode_e8m0(3.0f, E8M0Rounding::kUp) == 127 + 2);
  CHECK(encode_e8m0(3.0f, E8M0Rounding::kDown) == 127 + 1);
  CHECK(encode_e8m0(-3.0f, E8M0Rounding::kUp) == 127 + 2);  // |x|
  CHECK(encode_e8m0(std::nextafter(std::ldexp(1.0f, 127), kInf), E8M0Rounding::kUp) == 0xFE);
  CHECK(encode_e8m0(kInf, E8M0Rounding::kDown) == 0xFE);
  CHECK(encode_e8m0(std::numeric_limits<float>::quiet_NaN(), E8M0Rounding::kUp) == 0xFF);
}
