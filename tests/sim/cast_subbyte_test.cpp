// fp32 -> E2M1 / E2M3 / E3M2 (sim/cast.hpp): rounding and saturation on hand-picked values, and
// what each peer's mode makes of NaN, ±Inf and -0. The exhaustive proofs against CUDA and
// ml_dtypes are cast_subbyte_cuda_oracle_test and cast_subbyte_ml_dtypes_oracle.py.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/cast.hpp"
#include "tests/sim/float_bits.hpp"

using namespace fp8lab::sim;
using fp8lab::testing::from_bits;

namespace {

constexpr Format kSubbyte[] = {Format::E2M1, Format::E2M3, Format::E3M2};
constexpr SubbyteSpecials kModes[] = {kSubbyteCuda, kSubbyteMlDtypes, kSubbyteTorchao,
                                      kSubbyteTeReference};

unsigned cast(float x, Format f, SubbyteSpecials s) { return cast_fp32_to_subbyte(x, f, s); }

}  // namespace

TEST_CASE("E2M1 ties round to the even code (reference/fp4-formats.md §1)") {
  // 0.25->0, 0.75->1, 1.25->1, 1.75->2, 2.5->2, 3.5->4, 5->4; above 5 -> 6.
  const struct {
    float x;
    unsigned code;
  } cases[] = {{0.25f, 0x0},  {0.75f, 0x2}, {1.25f, 0x2},      {1.75f, 0x4},      {2.5f, 0x4},
               {3.5f, 0x6},   {5.0f, 0x6},  {5.0000005f, 0x7}, {0.2500001f, 0x1}, {100.0f, 0x7},
               {-0.25f, 0x8}, {-5.0f, 0xE}, {-7.0f, 0xF},      {1e-30f, 0x0},     {-1e-30f, 0x8}};
  for (const auto& c : cases) {
    for (const SubbyteSpecials mode : kModes) {
      INFO("x = " << c.x << " nan mode " << to_string(mode.nan));
      CHECK(cast(c.x, Format::E2M1, mode) == c.code);
    }
  }
}

TEST_CASE("every code's value casts back to the code, midpoints go to the even neighbour") {
  for (const Format f : kSubbyte) {
    const unsigned max_code = spec(f).max_finite_code();
    const unsigned sign = spec(f).sign_mask();
    for (unsigned code = 0; code <= max_code; ++code) {
      const float v = decode_subbyte(static_cast<std::uint8_t>(code), f);
      INFO(spec(f).name << " code 0x" << std::hex << code << " value " << v);
      CHECK(cast(v, f, kSubbyteCuda) == code);
      CHECK(cast(-v, f, kSubbyteCuda) == (code | sign));
      if (code == max_code) continue;
      const float next = decode_subbyte(static_cast<std::uint8_t>(code + 1), f);
      const float mid = (v + next) / 2;  // exact: both are short binary fractions
      const unsigned even = code % 2 == 0 ? code : code + 1;
      CHECK(cast(mid, f, kSubbyteCuda) == even);
      CHECK(cast(std::nextafter(mid, 0.0f), f, kSubbyteCuda) == code);
      CHECK(cast(std::nextafter(mid, 100.0f), f, kSubbyteCuda) == code + 1);
    }
    // Saturation: the largest fp32 and everything from max + half an ulp of the top binade.
    CHECK(cast(std::numeric_limits<float>::max(), f, kSubbyteCuda) == max_code);
    CHECK(cast(-std::numeric_limits<float>::max(), f, kSubbyteCuda) == (max_code | sign));
  }
}

TEST_CASE("±Inf saturates to ±max in every mode") {
  const float inf = std::numeric_limits<float>::infinity();
  for (const Format f : kSubbyte) {
    for (const SubbyteSpecials mode : kModes) {
      INFO(spec(f).name << " nan mode " << to_string(mode.nan));
      CHECK(cast(inf, f, mode) == spec(f).max_finite_code());
      CHECK(cast(-inf, f, mode) == (spec(f).max_finite_code() | spec(f).sign_mask()));
    }
  }
}

TEST_CASE("NaN and -0 by peer: CUDA +max, ml_dtypes opposite zero, TE table +0, torchao bits") {
  const float pos_nan = from_bits(0x7FC0'0000);  // the canonical quiet NaN
  const float neg_nan = from_bits(0xFFC0'0000);
  const float neg_zero = -0.0f;
  struct Case {
    const char* peer;
    SubbyteSpecials mode;
    float x;
    Format format;
    unsigned code;
  };
  const Case cases[] = {
      // CUDA (cuda_fp4.hpp / cuda_fp6.hpp host code, "NaN converts to positive MAXNORM").
      {"cuda", kSubbyteCuda, pos_nan, Format::E2M1, 0x7},
      {"cuda", kSubbyteCuda, neg_nan, Format::E2M1, 0x7},
      {"cuda", kSubbyteCuda, neg_nan, Format::E3M2, 0x1F},
      {"cuda", kSubbyteCuda, neg_zero, Format::E2M1, 0x8},
      // ml_dtypes 0.7.0: quiet_NaN() is the sign-only code, negated for a negative NaN (run: +NaN
      // -> 8, -NaN -> 0 for float4_e2m1fn; 32 / 0 for both FP6 types).
      {"ml_dtypes", kSubbyteMlDtypes, pos_nan, Format::E2M1, 0x8},
      {"ml_dtypes", kSubbyteMlDtypes, neg_nan, Format::E2M1, 0x0},
      {"ml_dtypes", kSubbyteMlDtypes, pos_nan, Format::E2M3, 0x20},
      {"ml_dtypes", kSubbyteMlDtypes, neg_nan, Format::E3M2, 0x00},
      {"ml_dtypes", kSubbyteMlDtypes, neg_zero, Format::E2M3, 0x20},
      // TE's reference table: NaN and an exact -0.0 stay at code 0; a negative underflow keeps -0.
      {"te_reference", kSubbyteTeReference, pos_nan, Format::E2M1, 0x0},
      {"te_reference", kSubbyteTeReference, neg_nan, Format::E2M1, 0x0},
      {"te_reference", kSubbyteTeReference, neg_zero, Format::E2M1, 0x0},
      {"te_reference", kSubbyteTeReference, -0.1f, Format::E2M1, 0x8},
      {"te_reference", kSubbyteTeReference, from_bits(0x8000'0001), Format::E2M1, 0x8},
      // torchao (reference/fp4-formats.md §1, run): the canonical NaN gives the code of 1.5 with
      // its sign; other payloads other codes (E2M1: 0x7FFFFFFF -> 0x411FFFFF >> 22 = 260 -> byte
      // 4, 0x7F800001 -> 258 -> 2).
      {"torchao", kSubbyteTorchao, pos_nan, Format::E2M1, 0x3},
      {"torchao", kSubbyteTorchao, neg_nan, Format::E2M1, 0xB},
      {"torchao", kSubbyteTorchao, pos_nan, Format::E2M3, 0x0C},
      {"torchao", kSubbyteTorchao, pos_nan, Format::E3M2, 0x0E},
      {"torchao", kSubbyteTorchao, from_bits(0x7FFF'FFFF), Format::E2M1, 0x4},
      {"torchao", kSubbyteTorchao, from_bits(0x7F80'0001), Format::E2M1, 0x2},
      {"torchao", kSubbyteTorchao, neg_zero, Format::E2M1, 0x8},
  };
  for (const Case& c : cases) {
    INFO(c.peer << " " << spec(c.format).name << " x = 0x" << std::hex << fp8lab::testing::bits(c.x)
                << ": code 0x" << cast(c.x, c.format, c.mode) << ", expected 0x" << c.code);
    CHECK(cast(c.x, c.format, c.mode) == c.code);
  }
  // Every NaN code of every mode is a code of the format (no bits above its width).
  for (const Format f : kSubbyte) {
    for (const SubbyteSpecials mode : kModes) {
      for (const std::uint32_t bits : {0x7F80'0001u, 0x7FC0'0000u, 0x7FFF'FFFFu, 0xFFFF'FFFFu}) {
        INFO(spec(f).name << " " << to_string(mode.nan) << " 0x" << std::hex << bits);
        CHECK(cast(from_bits(bits), f, mode) >> spec(f).total_bits() == 0);
      }
    }
  }
}

TEST_CASE("cast_fp32_to_subbyte refuses formats that are not sub-byte") {
  CHECK_THROWS_WITH(cast_fp32_to_subbyte(1.0f, Format::E4M3, kSubbyteCuda),
                    Catch::Contains("e4m3") && Catch::Contains("e2m1"));
  CHECK_THROWS_AS(cast_fp32_to_subbyte(1.0f, Format::BF16, kSubbyteCuda), std::invalid_argument);
}
