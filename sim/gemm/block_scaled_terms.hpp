// The block-scaled MMA model's decoding of codes and scale bytes into terms (block_scaled.hpp),
// written once for its two implementations: the scalar reference (block_scaled.cpp) and the
// Highway lanes (block_scaled_lanes.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/cast.hpp"
#include "sim/format.hpp"
#include "sim/gemm/block_scaled.hpp"

namespace fp8lab::sim::gemm_detail {

// An element or scale value as m * 2^(e - 3), |m| <= 15 (every format here has at most 3
// mantissa bits); a subnormal takes its format's minimum normal exponent (MMA-Sim's
// frexp_and_normalize), a zero has m = 0. `special`: NaN or Inf (value holds which).
struct BlockTerm {
  std::int8_t m = 0;
  std::int8_t e = 0;
  bool special = false;
  float value = 0.0f;
};

inline BlockTerm block_term_of(float value, int min_exponent) {
  BlockTerm t;
  t.value = value;
  if (!std::isfinite(value)) {
    t.special = true;
    return t;
  }
  if (value == 0.0f) return t;
  int e = std::ilogb(value);
  e = std::max(e, min_exponent);
  t.e = static_cast<std::int8_t>(e);
  t.m = static_cast<std::int8_t>(std::ldexp(value, 3 - e));  // exact: at most 3 fraction bits
  return t;
}

// The 256 codes of an element format as terms; codes outside a sub-byte format are not codes.
inline std::array<BlockTerm, 256> block_element_table(Format format) {
  std::array<BlockTerm, 256> table{};
  const int codes = 1 << spec(format).total_bits();
  for (int c = 0; c < codes; ++c) {
    table[c] = block_term_of(decode_element(static_cast<std::uint8_t>(c), format),
                             spec(format).min_normal_exponent());
  }
  return table;
}

// A scale byte as a term: UE8M0 2^(byte - 127) (m = 8; its exponent, -127..128, does not fit the
// int8 e and is block_scale_exponent's), UE4M3 the E4M3 value of byte & 0x7F.
inline BlockTerm block_scale_term(std::uint8_t byte, BlockScaleType type) {
  if (type == BlockScaleType::kUe8m0) {
    BlockTerm t;
    if (byte == 0xFF) {
      t.special = true;
      t.value = std::numeric_limits<float>::quiet_NaN();
      return t;
    }
    t.m = 8;
    t.e = 0;
    t.value = std::ldexp(1.0f, byte - 127);
    return t;
  }
  return block_term_of(decode_fp8(byte & 0x7F, Format::E4M3),
                       spec(Format::E4M3).min_normal_exponent());
}

// The exponent e of a scale byte's term (value m * 2^(e - 3)).
inline int block_scale_exponent(std::uint8_t byte, BlockScaleType type) {
  return type == BlockScaleType::kUe8m0 ? byte - 127 : block_scale_term(byte, type).e;
}

}  // namespace fp8lab::sim::gemm_detail
