// The sub-byte element cast of the blocked walk (subbyte_lanes.hpp) in Highway lanes, with the
// bits of cast_fp32_to_subbyte: for y = x * s and a = min(|y|, max) (satfinite: every |y| above
// max gives max, so clamping first changes no code), e = max(exponent(a), e_min) is the exponent
// of a's grid, a * 2^(M - e) is exact (a power of two), its round-to-nearest-even integer n is
// the count of grid steps, and the magnitude code is ((e - e_min) << M) + n (n = 2^M for a
// subnormal a that rounds up is the smallest normal; n = 2^(M+1) carries into the next binade,
// both their correct encodings). The sign bit is y's; -0 gives +0 where the specials say so. A
// vector with a NaN y goes to the scalar cast, whose NaN code depends on the specials.
#include "sim/scaling/subbyte_lanes.hpp"

#include <cmath>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/scaling/subbyte_lanes.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/lane_types-inl.h"

#ifndef FP8LAB_SIM_SCALING_SUBBYTE_LANES_ONCE
#define FP8LAB_SIM_SCALING_SUBBYTE_LANES_ONCE
namespace fp8lab::sim::scaling::subbyte_detail {
namespace {

// What one element needs besides x and s (blocked.cpp's rule for the statistics).
struct ElementRule {
  Format format;
  SubbyteSpecials specials;
  std::uint32_t sign_mask;
  float overflow_at;  // |y| from which RN gives more than max: max + half an ulp
};

inline ElementRule element_rule(Format format, SubbyteSpecials specials) {
  const FormatSpec& f = spec(format);
  const auto max = static_cast<float>(f.max_finite());
  // Every sub-byte max has an all-ones mantissa, so its tie with the next binade rounds up.
  return {format, specials, f.sign_mask(),
          max + std::ldexp(1.0f, f.max_exponent() - f.mantissa_bits - 1)};
}

inline void scalar_element(float v, float s, const ElementRule& rule, QuantizeStats& stats,
                           std::uint8_t* out) {
  const float y = v * s;
  const std::uint8_t code = cast_fp32_to_subbyte(y, rule.format, rule.specials);
  *out = code;
  if (y != y) {
    ++stats.nan;
  } else if (std::fabs(y) >= rule.overflow_at) {
    ++stats.saturated;
  } else if (v != 0.0f && (code & ~rule.sign_mask) == 0) {
    ++stats.underflowed;
  }
}

}  // namespace
}  // namespace fp8lab::sim::scaling::subbyte_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::scaling::subbyte_detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using namespace fp8lab::sim::HWY_NAMESPACE::lane_types;

// kM mantissa bits, kEmin the smallest normal exponent (unbiased).
template <int kM, int kEmin>
QuantizeStats Rows(const float* x, std::size_t n, std::size_t cols, const float* scales,
                   std::size_t run, const ElementRule& rule, std::uint8_t* out) {
  const DF df;
  const DI di;
  const std::size_t lanes = hn::Lanes(df);
  const VF max = hn::Set(df, static_cast<float>(spec(rule.format).max_finite()));
  const VF overflow_at = hn::Set(df, rule.overflow_at);
  const VI sign_mask = hn::Set(di, static_cast<std::int32_t>(rule.sign_mask));
  const VI magnitude_mask = hn::Set(di, static_cast<std::int32_t>(rule.sign_mask - 1));
  const VI negative_zero = hn::Set(di, static_cast<std::int32_t>(0x8000'0000u));
  const bool plus_zero_for_minus = !rule.specials.keep_negative_zero;
  QuantizeStats stats;
  for (std::size_t r0 = 0; r0 < n; r0 += cols) {
    const float* xr = x + r0;
    std::uint8_t* o = out + r0;
    std::size_t c = 0;
    for (; c + lanes <= cols; c += lanes) {
      const VF s = run == 1 ? hn::LoadU(df, scales + c) : hn::Set(df, scales[c / run]);
      const VF v = hn::LoadU(df, xr + c);
      const VF y = hn::Mul(v, s);
      if (!hn::AllFalse(df, hn::IsNaN(y))) {
        for (std::size_t j = c; j < c + lanes; ++j) {
          scalar_element(xr[j], scales[j / run], rule, stats, o + j);
        }
        continue;
      }
      const VF a = hn::Abs(y);
      const VF clamped = hn::Min(a, max);
      const VI e = hn::Max(hn::Sub(hn::ShiftRight<23>(hn::BitCast(di, clamped)), hn::Set(di, 127)),
                           hn::Set(di, kEmin));
      const VF to_steps = hn::BitCast(df, hn::ShiftLeft<23>(hn::Sub(hn::Set(di, kM + 127), e)));
      const VI steps = hn::ConvertTo(di, hn::Round(hn::Mul(clamped, to_steps)));
      const VI magnitude = hn::Add(hn::ShiftLeft<kM>(hn::Sub(e, hn::Set(di, kEmin))), steps);
      const VI y_bits = hn::BitCast(di, y);
      VI code = hn::Or(magnitude, hn::And(hn::ShiftRight<31>(y_bits), sign_mask));
      if (plus_zero_for_minus) code = hn::IfThenZeroElse(hn::Eq(y_bits, negative_zero), code);
      hn::StoreU(hn::DemoteTo(DU8(), code), DU8(), o + c);
      stats.saturated += hn::CountTrue(df, hn::Ge(a, overflow_at));
      const auto zero_code = hn::Eq(hn::And(code, magnitude_mask), hn::Zero(di));
      stats.underflowed +=
          hn::CountTrue(di, hn::And(zero_code, hn::RebindMask(di, hn::Ne(v, hn::Zero(df)))));
    }
    for (; c < cols; ++c) scalar_element(xr[c], scales[c / run], rule, stats, o + c);
  }
  stats.count = n;
  return stats;
}

QuantizeStats SubbyteRowsLanes(const float* x, std::size_t n, std::size_t cols, const float* scales,
                               std::size_t run, Format format, SubbyteSpecials specials,
                               std::uint8_t* out) {
  const ElementRule rule = element_rule(format, specials);
  // One multiplier per vector needs a vector inside one block (run a multiple of the lanes,
  // which the rows' starts then are too), or one block per column.
  if (run != 1 && run % hn::Lanes(DF()) != 0) {
    return subbyte_rows_scalar(x, n, cols, scales, run, format, specials, out);
  }
  static_assert(kE2M1Spec.min_normal_exponent() == 0 && kE2M3Spec.min_normal_exponent() == 0 &&
                kE3M2Spec.min_normal_exponent() == -2);
  switch (format) {
    case Format::E2M1: return Rows<1, 0>(x, n, cols, scales, run, rule, out);
    case Format::E2M3: return Rows<3, 0>(x, n, cols, scales, run, rule, out);
    default: return Rows<2, -2>(x, n, cols, scales, run, rule, out);  // E3M2
  }
}

const char* SubbyteRowsTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::scaling::subbyte_detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fp8lab::sim::scaling::subbyte_detail {
HWY_EXPORT(SubbyteRowsLanes);
HWY_EXPORT(SubbyteRowsTargetName);

QuantizeStats subbyte_rows_scalar(const float* x, std::size_t n, std::size_t cols,
                                  const float* scales, std::size_t run, Format format,
                                  SubbyteSpecials specials, std::uint8_t* out) {
  const ElementRule rule = element_rule(format, specials);
  QuantizeStats stats;
  for (std::size_t i = 0; i < n; ++i)
    scalar_element(x[i], scales[(i % cols) / run], rule, stats, out + i);
  stats.count = n;
  return stats;
}

QuantizeStats subbyte_rows_lanes(const float* x, std::size_t n, std::size_t cols,
                                 const float* scales, std::size_t run, Format format,
                                 SubbyteSpecials specials, std::uint8_t* out) {
  return HWY_DYNAMIC_DISPATCH(SubbyteRowsLanes)(x, n, cols, scales, run, format, specials, out);
}

const char* subbyte_rows_target_name() { return HWY_DYNAMIC_DISPATCH(SubbyteRowsTargetName)(); }

}  // namespace fp8lab::sim::scaling::subbyte_detail
#endif
