// Format descriptors and decode tables against the formats' definitions, all 256 codes.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/cast.hpp"
#include "sim/format.hpp"

using namespace fp8lab::sim;

namespace {
// Value of an OCP / IEEE-style code written from the definition, independently of cast.cpp:
// (-1)^s * 2^(e - bias) * (1 + m / 2^M), or 2^(1 - bias) * (m / 2^M) when e == 0.
double reference_value(unsigned code, int e_bits, int m_bits, int bias) {
  const unsigned m = code & ((1u << m_bits) - 1);
  const unsigned e = (code >> m_bits) & ((1u << e_bits) - 1);
  const bool negative = (code >> (e_bits + m_bits)) & 1u;
  const double frac = static_cast<double>(m) / static_cast<double>(1u << m_bits);
  const double magnitude = e == 0 ? std::ldexp(frac, 1 - bias)
                                  : std::ldexp(1.0 + frac, static_cast<int>(e) - bias);
  return negative ? -magnitude : magnitude;
}
}  // namespace

TEST_CASE("E4M3 decode: all 256 codes, NaN only at s.1111.111, no Inf") {
  for (unsigned code = 0; code < 256; ++code) {
    const float v = decode_fp8(static_cast<std::uint8_t>(code), Format::E4M3);
    INFO("code 0x" << std::hex << code);
    if ((code & 0x7F) == 0x7F) {
      CHECK(std::isnan(v));
    } else {
      CHECK(static_cast<double>(v) == reference_value(code, 4, 3, 7));
      CHECK_FALSE(std::isinf(v));
    }
  }
  CHECK(decode_fp8(0x7E, Format::E4M3) == 448.0f);
  CHECK(decode_fp8(0x01, Format::E4M3) == std::ldexp(1.0f, -9));
  CHECK(std::bit_cast<std::uint32_t>(decode_fp8(0x80, Format::E4M3)) == 0x8000'0000u);  // -0
}

TEST_CASE("E5M2 decode: all 256 codes, Inf at 0x7C, NaN at 0x7D..0x7F") {
  for (unsigned code = 0; code < 256; ++code) {
    const float v = decode_fp8(static_cast<std::uint8_t>(code), Format::E5M2);
    INFO("code 0x" << std::hex << code);
    const unsigned magnitude = code & 0x7F;
    if (magnitude == 0x7C) {
      CHECK(std::isinf(v));
      CHECK(std::signbit(v) == (code >= 0x80));
    } else if (magnitude > 0x7C) {
      CHECK(std::isnan(v));
    } else {
      CHECK(static_cast<double>(v) == reference_value(code, 5, 2, 15));
    }
  }
  CHECK(decode_fp8(0x7B, Format::E5M2) == 57344.0f);
  CHECK(decode_fp8(0x01, Format::E5M2) == std::ldexp(1.0f, -16));
}

TEST_CASE("E8M0 decode: 2^(code-127), 0xFF is NaN") {
  for (unsigned code = 0; code < 255; ++code) {
    INFO("code " << code);
    CHECK(decode_e8m0(static_cast<std::uint8_t>(code)) ==
          std::ldexp(1.0f, static_cast<int>(code) - 127));
  }
  CHECK(std::isnan(decode_e8m0(0xFF)));
}

TEST_CASE("format descriptors derive the documented limits") {
  CHECK(spec(Format::E4M3).max_finite() == 448.0);
  CHECK(spec(Format::E5M2).max_finite() == 57344.0);
  CHECK(spec(Format::E2M3).max_finite() == 7.5);
  CHECK(spec(Format::E3M2).max_finite() == 28.0);
  CHECK(spec(Format::E2M1).max_finite() == 6.0);
  CHECK(spec(Format::FP16).max_finite() == 65504.0);
  CHECK(spec(Format::E4M3).has_nan());
  CHECK_FALSE(spec(Format::E4M3).has_inf());
  CHECK(spec(Format::E5M2).has_inf());
  CHECK_FALSE(spec(Format::E2M1).has_nan());
}

TEST_CASE("E2M1 / E2M3 / E3M2 decode: every code, no Inf or NaN; wider bytes are not codes") {
  struct Case {
    Format format;
    int e_bits, m_bits, bias;
  };
  for (const Case c :
       {Case{Format::E2M1, 2, 1, 1}, Case{Format::E2M3, 2, 3, 1}, Case{Format::E3M2, 3, 2, 3}}) {
    const unsigned codes = 1u << (1 + c.e_bits + c.m_bits);
    for (unsigned code = 0; code < 256; ++code) {
      const float v = decode_subbyte(static_cast<std::uint8_t>(code), c.format);
      INFO(spec(c.format).name << " code 0x" << std::hex << code);
      if (code < codes) {
        CHECK(static_cast<double>(v) == reference_value(code, c.e_bits, c.m_bits, c.bias));
        CHECK(std::signbit(v) == (code >= codes / 2));  // the -0 code decodes to -0.0
      } else {
        CHECK(std::isnan(v));
      }
    }
  }
  // OCP MX v1.0 table 4 / reference/fp4-formats.md §1: the E2M1 grid, max and min subnormals.
  const float e2m1_grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (unsigned code = 0; code < 8; ++code) {
    CHECK(decode_subbyte(static_cast<std::uint8_t>(code), Format::E2M1) == e2m1_grid[code]);
    CHECK(decode_subbyte(static_cast<std::uint8_t>(code | 8), Format::E2M1) == -e2m1_grid[code]);
  }
  CHECK(decode_subbyte(0x1F, Format::E2M3) == 7.5f);
  CHECK(decode_subbyte(0x01, Format::E2M3) == 0.125f);
  CHECK(decode_subbyte(0x1F, Format::E3M2) == 28.0f);
  CHECK(decode_subbyte(0x01, Format::E3M2) == 0.0625f);
  CHECK(std::isnan(decode_subbyte(0x01, Format::E4M3)));  // not a sub-byte format
}
