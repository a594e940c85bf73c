// The fixed-point steps shared by the tensor-core models that align every term of a dot product to
// the largest exponent and keep F fraction bits (MMA-Sim's `truncated_fused_sum` and its RZ-FP32
// output, shared/spec/reference/fp4-formats.md §5): the Blackwell block-scaled MMA
// (sim/gemm/block_scaled.cpp) and the bf16 MMA of the random Hadamard transform (sim/rht.cpp).
//
// A term is an integer m times 2^q. On the grid 2^(E_max - F) it becomes
// trunc(m * 2^(q - E_max + F)): a left shift, or a right shift of |m| (truncation toward zero).
// The terms then add exactly in int64 (every caller bounds the sum below 2^53, so it converts to
// double exactly) and the sum is rounded once toward zero to fp32.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace fp8lab::sim::gemm_detail {

// trunc(m * 2^shift) for |m| < 2^62 and a result that fits int64 (callers keep left shifts small).
inline std::int64_t shift_toward_zero(std::int64_t m, int shift) {
  if (shift >= 0) return m * (std::int64_t{1} << shift);
  if (shift <= -63) return 0;
  const std::int64_t magnitude = (m < 0 ? -m : m) >> -shift;
  return m < 0 ? -magnitude : magnitude;
}

// sum * 2^exponent rounded toward zero to fp32 (subnormals on their 2^-149 grid), as MMA-Sim's
// ldexp_and_normalize(..., "RZ-FP32"): it truncates the significand to 24 bits and converts, so a
// magnitude of 2^128 or more becomes Inf (not FLT_MAX). A zero sum is +0 (MMA-Sim adds +0.0).
// |sum| < 2^53 (exact as a double) and 2^exponent within double's normal range.
inline float round_toward_zero_fp32(std::int64_t sum, int exponent) {
  if (sum == 0) return 0.0f;
  const double value = std::ldexp(static_cast<double>(sum), exponent);  // exact
  if (std::fabs(value) >= 0x1p128)
    return value < 0 ? -std::numeric_limits<float>::infinity()
                     : std::numeric_limits<float>::infinity();
  float rounded = static_cast<float>(value);  // nearest; step back if it rounded away from zero
  if (std::fabs(static_cast<double>(rounded)) > std::fabs(value)) {
    rounded = std::nextafter(rounded, 0.0f);
  }
  return rounded;
}

// An fp32 value as m * 2^(e - 23) with m a 24-bit integer (sign included) and e its exponent,
// normalized as MMA-Sim's frexp_and_normalize(e_subnormal = -126): subnormals take e = -126.
// Finite, nonzero inputs only.
struct Fp32Term {
  std::int64_t m;
  int e;
};
inline Fp32Term fp32_term(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const auto field = static_cast<int>((bits >> 23) & 0xFF);
  std::int64_t m = bits & 0x7FFFFF;
  if (field != 0) m |= 0x800000;
  return {(bits >> 31) != 0 ? -m : m, field == 0 ? -126 : field - 127};
}

}  // namespace fp8lab::sim::gemm_detail
