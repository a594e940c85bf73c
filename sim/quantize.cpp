// Bulk quantize (sim/quantize.hpp), vectorized with Highway and dispatched at run time to the best
// target the CPU has (SSSE3 / SSE4 / AVX2 / AVX-512). The scalar casts of sim/cast.cpp remain the
// definition: tests/sim/quantize_bulk_test.cpp compares every target with reference::quantize
// byte for byte and statistic for statistic, and quantize_bulk_exhaustive_test runs all 2^32 fp32
// patterns through this path.
//
// One element, all in 32-bit integer lanes on the bits of y = RN(x * scale) (an IEEE multiply, no
// FMA: cmake/fp8lab_options.cmake), a = |y| as bits, M = target mantissa bits, shift = 23 - M:
//   1. Normal target range (a >= bits of 2^emin): the same rounding as cast.cpp's round_magnitude,
//      code = (a + (2^(shift-1) - 1) + lsb) >> shift, minus the exponent rebias (127 - bias) << M;
//      a mantissa carry flows into the exponent, which is the next binade.
//   2. Subnormal target range: the float sum |y| + C with C = 2^(emin_subnormal + 23) (E4M3: 2^14,
//      E5M2: 2^7), whose ulp is the target's subnormal step, rounds |y| to that step with the
//      hardware's RNE; bits(sum) - bits(C) is the subnormal code (8 = 0b0'0001'000, the smallest
//      normal, when it rounds up to it). Exact for fp32 subnormal y too (no FTZ/DAZ).
//   3. Overflow: code > max finite code -> the mode's code for finite overflow, or for ±Inf
//      (a == 0x7F80'0000); the sign bit is OR-ed in; NaN (a > 0x7F80'0000) -> 0x7F.
// Statistics: mask population counts per vector; amax as an integer max of |x| bits with NaN
// lanes zeroed, which for non-negative floats is amax_update (quantize.hpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/quantize.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/philox-inl.h"
#include "sim/prefetch.hpp"
#include "sim/quantize.hpp"
#include "sim/quantize_arguments.hpp"
#include "sim/rng.hpp"

#ifndef FP8LAB_SIM_QUANTIZE_CONSTANTS
#define FP8LAB_SIM_QUANTIZE_CONSTANTS
#include <hwy/cache_control.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace fp8lab::sim::bulk {

// Everything the kernel needs about (format, mode), derived from FormatSpec once per call.
struct CastConstants {
  std::int32_t shift;            // fp32 mantissa bits dropped in the normal range
  std::int32_t half_minus_one;   // 2^(shift-1) - 1
  std::int32_t rebias;           // (127 - bias) << M
  std::int32_t min_normal_bits;  // fp32 bits of 2^emin
  float subnormal_magic;         // 2^(emin_subnormal + 23)
  std::int32_t max_finite_code;
  std::int32_t finite_overflow_code;  // code (no sign) of a finite value past max
  std::int32_t inf_code;              // code (no sign) of ±Inf
  std::int32_t nan_above;             // codes (no sign) above this are NaN
  std::int32_t underflow_below;  // 1 + fp32 bits of half the smallest subnormal: a below -> ±0
};

inline CastConstants make_cast_constants(Format format, Overflow mode) {
  const FormatSpec& f = spec(format);
  CastConstants c{};
  c.shift = 23 - f.mantissa_bits;
  c.half_minus_one = (1 << (c.shift - 1)) - 1;
  c.rebias = (127 - f.bias) << f.mantissa_bits;
  c.min_normal_bits = (f.min_normal_exponent() + 127) << 23;
  c.subnormal_magic = std::bit_cast<float>((f.min_subnormal_exponent() + 23 + 127) << 23);
  c.max_finite_code = static_cast<std::int32_t>(f.max_finite_code());
  // The single definition of what overflow becomes is cast_fp32_to_fp8: ask it.
  const float past_max = static_cast<float>(f.max_finite()) * 2.0f;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  c.finite_overflow_code = cast_fp32_to_fp8(past_max, format, mode);
  c.inf_code = cast_fp32_to_fp8(kInf, format, mode);
  const std::uint32_t top = f.max_exponent_field() << f.mantissa_bits;
  c.nan_above = static_cast<std::int32_t>(f.has_inf() ? top : f.max_finite_code());
  c.underflow_below = ((f.min_subnormal_exponent() - 1 + 127) << 23) + 1;
  return c;
}

}  // namespace fp8lab::sim::bulk
#endif

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::bulk {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using DU8 = hn::Rebind<std::uint8_t, DF>;
using DU16 = hn::Rebind<std::uint16_t, DF>;
using DU32 = hn::RebindToUnsigned<DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;
using VU = hn::Vec<DU32>;

// Loads Lanes(DF) input elements as fp32 bits; prefetch(i) asks for the cache line
// kPrefetchBytes beyond element i (see kPrefetchBytes).
struct LoadF32 {
  static constexpr bool kPairs = false;
  const float* x;
  VI operator()(std::size_t i) const { return hn::BitCast(DI(), hn::LoadU(DF(), x + i)); }
  void prefetch(std::size_t i) const { hwy::Prefetch(x + i + kPrefetchBytes / sizeof(float)); }
};
// bf16 is the top half of an fp32: widen and shift, exact.
struct LoadBF16 {
  static constexpr bool kPairs = false;
  const std::uint16_t* x;
  VI operator()(std::size_t i) const {
    const auto wide = hn::PromoteTo(DU32(), hn::LoadU(DU16(), x + i));
    return hn::BitCast(DI(), hn::ShiftLeft<16>(wide));
  }
  void prefetch(std::size_t i) const {
    hwy::Prefetch(x + i + kPrefetchBytes / sizeof(std::uint16_t));
  }
};
#if HWY_TARGET != HWY_SCALAR
// bf16 two vectors at a time: one full vector of 2 * Lanes values, each 128-bit block's lower and
// upper four interleaved with zero (ZipLower / ZipUpper: the 16-bit shift comes free, one
// instruction per vector instead of a widening load and a shift). The fp32 lanes then hold the
// elements block by block out of order: `first` has elements 8b..8b+3 of each block b, `second`
// 8b+4..8b+7; ReorderDemote2To (packssdw, per 128-bit block: first's four, then second's four)
// undoes exactly that, so the codes are stored in element order.
struct LoadBF16Pairs {
  static constexpr bool kPairs = true;
  const std::uint16_t* x;
  void pair(std::size_t i, VI& first, VI& second) const {
    const hn::Repartition<std::uint16_t, DU32> du16;
    const auto v = hn::LoadU(du16, x + i);
    const auto zero16 = hn::Zero(du16);
    first = hn::BitCast(DI(), hn::ZipLower(DU32(), zero16, v));
    second = hn::BitCast(DI(), hn::ZipUpper(DU32(), zero16, v));
  }
  void prefetch(std::size_t i) const {
    hwy::Prefetch(x + i + kPrefetchBytes / sizeof(std::uint16_t));
  }
};
#endif

// a >> shift, arithmetic. kShift != 0 is the shift as a compile-time constant: an immediate
// shift is one instruction where a shift by a count in a register is two on AVX-512, and the
// kernel's normal range shifts twice per vector (E4M3: 20, E5M2: 21; 0 = the count at run time).
template <int kShift>
HWY_INLINE VI shift_right(VI a, int shift) {
  if constexpr (kShift != 0) {
    return hn::ShiftRight<kShift>(a);
  } else {
    return hn::ShiftRightSame(a, shift);
  }
}

// One vector of the kernel; see the numbered steps at the top of this file. Two mode properties
// are template parameters because each costs instructions only when it holds:
//   kInfDistinct:  ±Inf does not become what finite overflow becomes (sat_keep_inf);
//   kOverflowNaN:  some overflow becomes NaN (E4M3 nosat and sat_keep_inf), so NaN codes are not
//                  only those of NaN y.
template <bool kInfDistinct, bool kOverflowNaN, int kShift, class Load, class Scale>
QuantizeStats quantize_vectors(std::size_t n, Load load, Scale scale_at, const CastConstants& c,
                               std::uint8_t* HWY_RESTRICT out) {
  const DF df;
  const DI di;
  const std::size_t lanes = hn::Lanes(df);
  const int shift = c.shift;
  const VI abs_mask = hn::Set(di, 0x7FFF'FFFF);
  const VI inf_bits = hn::Set(di, 0x7F80'0000);
  const VI zero = hn::Zero(di);
  const VI one = hn::Set(di, 1);
  // Step 1 with the rebias folded in: (a + 2^(shift-1) - 1 + lsb - (rebias << shift)) >> shift.
  // For a below the normal range the sum may be negative; step 2 replaces those lanes.
  const VI round_and_rebias = hn::Set(di, c.half_minus_one - (c.rebias << shift));
  const VI min_normal_bits = hn::Set(di, c.min_normal_bits);
  const VF magic = hn::Set(df, c.subnormal_magic);
  const VI magic_bits = hn::BitCast(di, magic);
  const VI max_finite = hn::Set(di, c.max_finite_code);
  const VI finite_overflow = hn::Set(di, c.finite_overflow_code);
  const VI inf_code = hn::Set(di, c.inf_code);
  const VI nan_above = hn::Set(di, c.nan_above);
  const VI canonical_nan = hn::Set(di, kFp8CanonicalNan);
  const VI underflow_below = hn::Set(di, c.underflow_below);

  const VI not_nan_below = hn::Set(di, 0x7F80'0001);
  const VI sign_bit = hn::Set(di, 0x80);

  VI amax_bits = zero;
  std::size_t overflowed = 0, nan_y = 0, nan_codes = 0, below_half_subnormal = 0, zeros = 0;
  // The codes (one per 32-bit lane) of one vector of input bits, its statistics counted.
  auto cast = [&](const VI x_bits, const VF scale) HWY_ATTR {
    const VI x_abs = hn::And(x_bits, abs_mask);
    amax_bits = hn::IfThenElse(x_abs < not_nan_below, hn::Max(amax_bits, x_abs), amax_bits);

    const VI y_bits = hn::BitCast(di, hn::Mul(hn::BitCast(df, x_bits), scale));
    const VI a = hn::And(y_bits, abs_mask);
    // 1. normal range
    const VI lsb = hn::And(shift_right<kShift>(a, shift), one);
    const VI normal = shift_right<kShift>(hn::Add(hn::Add(a, round_and_rebias), lsb), shift);
    // 2. subnormal range
    const VI subnormal = hn::Sub(hn::BitCast(di, hn::Add(hn::BitCast(df, a), magic)), magic_bits);
    const VI code = hn::IfThenElse(a < min_normal_bits, subnormal, normal);
    // 3. overflow, sign, NaN. fp32 sign bit 31 -> FP8 sign bit 7 by an unsigned shift.
    const auto y_nan = a > inf_bits;
    const auto overflow = code > max_finite;
    VI overflow_code = finite_overflow;
    if constexpr (kInfDistinct)
      overflow_code = hn::IfThenElse(a == inf_bits, inf_code, finite_overflow);
    const VI magnitude = hn::IfThenElse(overflow, overflow_code, code);
    const VI sign =
        hn::And(hn::BitCast(di, hn::ShiftRight<24>(hn::BitCast(DU32(), y_bits))), sign_bit);
    const VI result = hn::IfThenElse(y_nan, canonical_nan, hn::Or(magnitude, sign));

    // Statistics, as differences of counts that need no mask arithmetic:
    // - a NaN y always takes the overflow branch of step 3 (a >= 0x7F80'0001 gives code >= 1080
    //   for E4M3, >= 572 for E5M2), so saturated = overflow lanes - NaN y lanes;
    // - with a finite scale (quantize() sends others to the scalar path), x = ±0 gives y = ±0,
    //   so underflowed = lanes with |y| <= half the smallest subnormal (that tie goes to the even
    //   0; a NaN y is above it) - lanes with x = ±0.
    overflowed += hn::CountTrue(di, overflow);
    nan_y += hn::CountTrue(di, y_nan);
    if constexpr (kOverflowNaN)
      nan_codes += hn::CountTrue(di, hn::Or(y_nan, magnitude > nan_above));
    below_half_subnormal += hn::CountTrue(di, a < underflow_below);
    zeros += hn::CountTrue(di, x_abs == zero);
    return result;
  };
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (Load::kPairs) {
    // Two vectors per load, their codes packed back in element order (LoadBF16Pairs).
    const hn::Repartition<std::int16_t, DI> di16;
    const hn::Rebind<std::uint8_t, decltype(di16)> du8_pairs;
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      load.prefetch(i);
      VI first, second;
      load.pair(i, first, second);
      const VI codes_first = cast(first, scale_at(i));
      const VI codes_second = cast(second, scale_at(i + lanes));
      hn::StoreU(hn::DemoteTo(du8_pairs, hn::ReorderDemote2To(di16, codes_first, codes_second)),
                 du8_pairs, out + i);
    }
  } else
#endif
  {
    for (; i + lanes <= n; i += lanes) {
      load.prefetch(i);
      const VI result = cast(load(i), scale_at(i));
      hn::StoreU(hn::U8FromU32(hn::BitCast(DU32(), result)), DU8(), out + i);
    }
  }
  QuantizeStats stats;
  stats.amax = std::bit_cast<float>(hn::GetLane(hn::MaxOfLanes(di, amax_bits)));
  stats.count = i;
  stats.saturated = overflowed - nan_y;
  stats.underflowed = below_half_subnormal - zeros;
  stats.nan = kOverflowNaN ? nan_codes : nan_y;
  return stats;
}

// The scale of the vector at element i: one for the call, one per run of 2^log2_run elements
// (a run holds whole vectors), or one per element.
struct UniformScale {
  float scale;
  VF operator()(std::size_t) const { return hn::Set(DF(), scale); }
};
struct RunScale {
  const float* scales;
  int log2_run;
  VF operator()(std::size_t i) const { return hn::Set(DF(), scales[i >> log2_run]); }
};
struct ElementScale {
  const float* scales;
  VF operator()(std::size_t i) const { return hn::LoadU(DF(), scales + i); }
};

template <int kShift, class Load, class Scale>
QuantizeStats quantize_shifted(std::size_t n, Load load, Scale scale, const CastConstants& c,
                               std::uint8_t* HWY_RESTRICT out) {
  const bool inf_distinct = c.inf_code != c.finite_overflow_code;
  const bool overflow_nan = c.inf_code > c.nan_above || c.finite_overflow_code > c.nan_above;
  if (inf_distinct) {
    return overflow_nan ? quantize_vectors<true, true, kShift>(n, load, scale, c, out)
                        : quantize_vectors<true, false, kShift>(n, load, scale, c, out);
  }
  return overflow_nan ? quantize_vectors<false, true, kShift>(n, load, scale, c, out)
                      : quantize_vectors<false, false, kShift>(n, load, scale, c, out);
}

template <class Load, class Scale>
QuantizeStats quantize_any(std::size_t n, Load load, Scale scale, const CastConstants& c,
                           std::uint8_t* HWY_RESTRICT out) {
  constexpr int kE4M3Shift = 23 - kE4M3Spec.mantissa_bits;
  constexpr int kE5M2Shift = 23 - kE5M2Spec.mantissa_bits;
  switch (c.shift) {
    case kE4M3Shift: return quantize_shifted<kE4M3Shift>(n, load, scale, c, out);
    case kE5M2Shift: return quantize_shifted<kE5M2Shift>(n, load, scale, c, out);
    default: return quantize_shifted<0>(n, load, scale, c, out);
  }
}

QuantizeStats QuantizeF32(const float* x, std::size_t n, float scale, const CastConstants& c,
                          std::uint8_t* out) {
  return quantize_any(n, LoadF32{x}, UniformScale{scale}, c, out);
}
QuantizeStats QuantizeBF16(const std::uint16_t* x, std::size_t n, float scale,
                           const CastConstants& c, std::uint8_t* out) {
#if HWY_TARGET != HWY_SCALAR
  return quantize_any(n, LoadBF16Pairs{x}, UniformScale{scale}, c, out);
#else
  return quantize_any(n, LoadBF16{x}, UniformScale{scale}, c, out);
#endif
}
// log2_run < 0: one scale per element; else one per run of 2^log2_run >= Lanes elements.
QuantizeStats QuantizeF32Scaled(const float* x, std::size_t n, const float* scales, int log2_run,
                                const CastConstants& c, std::uint8_t* out) {
  if (log2_run < 0) return quantize_any(n, LoadF32{x}, ElementScale{scales}, c, out);
  return quantize_any(n, LoadF32{x}, RunScale{scales, log2_run}, c, out);
}

// amax (NaN ignored, as amax_vectors) and whether it holds a NaN, of each run of 2^log2_run
// elements of x[0, runs << log2_run); a run holds whole vectors.
void RunAmaxF32(const float* x, std::size_t runs, int log2_run, float* amax,
                std::uint8_t* has_nan) {
  const DI di;
  const std::size_t lanes = hn::Lanes(di);
  const std::size_t run = std::size_t{1} << log2_run;
  const VI abs_mask = hn::Set(di, 0x7FFF'FFFF);
  const VI inf_bits = hn::Set(di, 0x7F80'0000);
  for (std::size_t r = 0; r < runs; ++r) {
    const float* x_run = x + r * run;
    VI amax_bits = hn::Zero(di);
    auto nan = hn::FirstN(di, 0);
    for (std::size_t i = 0; i < run; i += lanes) {
      hwy::Prefetch(x_run + i + kPrefetchBytes / sizeof(float));
      const VI x_abs = hn::And(hn::BitCast(di, hn::LoadU(DF(), x_run + i)), abs_mask);
      const auto x_nan = x_abs > inf_bits;
      nan = hn::Or(nan, x_nan);
      amax_bits = hn::Max(amax_bits, hn::IfThenZeroElse(x_nan, x_abs));
    }
    amax[r] = std::bit_cast<float>(hn::GetLane(hn::MaxOfLanes(di, amax_bits)));
    has_nan[r] = static_cast<std::uint8_t>(hn::AllFalse(di, nan) ? 0 : 1);
  }
}

// For c < n in whole vectors: amax[c] = max(amax[c], |x[c]|) with NaN x ignored, and
// has_nan[c] |= whether x[c] is NaN; returns how many elements it did. amax holds NaN-ignoring
// amaxes (>= +0, not NaN), whose bits order as their values: an integer max, as in amax_vectors.
std::size_t ColumnAmaxF32(const float* HWY_RESTRICT x, std::size_t n, float* HWY_RESTRICT amax,
                          std::uint8_t* HWY_RESTRICT has_nan) {
  const DI di;
  const std::size_t lanes = hn::Lanes(di);
  const VI abs_mask = hn::Set(di, 0x7FFF'FFFF);
  const VI inf_bits = hn::Set(di, 0x7F80'0000);
  const VI one = hn::Set(di, 1);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hwy::Prefetch(x + i + kPrefetchBytes / sizeof(float));
    const VI x_abs = hn::And(hn::BitCast(di, hn::LoadU(DF(), x + i)), abs_mask);
    const auto x_nan = x_abs > inf_bits;
    const VI current = hn::BitCast(di, hn::LoadU(DF(), amax + i));
    const VI updated_amax = hn::Max(current, hn::IfThenZeroElse(x_nan, x_abs));
    hn::StoreU(hn::BitCast(DF(), updated_amax), DF(), amax + i);
    const VI flags = hn::BitCast(di, hn::PromoteTo(DU32(), hn::LoadU(DU8(), has_nan + i)));
    const VI updated = hn::Or(flags, hn::IfThenElseZero(x_nan, one));
    hn::StoreU(hn::U8FromU32(hn::BitCast(DU32(), updated)), DU8(), has_nan + i);
  }
  return i;
}

// ---- Stochastic rounding -------------------------------------------------------------------

using fp8lab::sim::HWY_NAMESPACE::PhiloxLanes;

// max(acc, x_abs) for |x| bits x_abs, acc a running max of such bits that is not NaN, with the
// lanes where x is NaN ignored: non-negative floats' bits order as their values, and on x86 one
// MAXPS, which gives its second operand where either is NaN, does what an integer max after
// zeroing the NaN lanes does (a compare and a masked move fewer per vector).
HWY_INLINE VI MaxIgnoringNaN(VI acc, VI x_abs) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  // Highway's float Max on x86 is MAXPS(a, b) (x86_128/256/512-inl.h): b where either is NaN.
  const DF df;
  return hn::BitCast(DI(), hn::Max(hn::BitCast(df, x_abs), hn::BitCast(df, acc)));
#else
  return hn::Max(acc, hn::IfThenZeroElse(x_abs > hn::Set(DI(), 0x7F80'0000), x_abs));
#endif
}

// The stochastic cast of cast.cpp (round_magnitude with random bits) on the same bits: add the
// low `dropped` bits of the random word below the kept bits, then truncate. dropped = shift in the
// normal range; below it, the 24-bit significand is shifted by shift + (emin - exponent) (fp32
// subnormals: no implicit bit, exponent field 0), and a shift of 32 or more gives 0. Element i
// draws philox_block_word(seed, stream, first_index + i); first_index a multiple of 4 keeps every
// group of words on the lanes path (quantize_stochastic below sees to that).
// 8 vectors a group: the Philox rounds of four half-vectors interleaved (PhiloxLanes::BlockWords),
// where two left the multiplier waiting on each round's latency (on an Ice Lake Xeon, e5m2 12.5 ->
// 10.4 ms, e4m3 14.2 -> 12.6 ms for 64 MiB with this loop's other changes; 16 vectors, 8 halves,
// spill and are slower: docs/performance.md, issue 46 item 2).
constexpr int kStochasticVectors = 8;
QuantizeStats QuantizeStochasticF32(const float* x, std::size_t n, float scale,
                                    const CastConstants& constants, std::uint64_t seed,
                                    std::uint64_t stream, std::uint64_t first_index,
                                    std::uint8_t* HWY_RESTRICT out) {
  const CastConstants c = constants;  // a local copy: stores to `out` cannot alias it
  const DF df;
  const DI di;
  const DU32 du;
  const std::size_t lanes = hn::Lanes(df);
  const int shift = c.shift;
  const VF vscale = hn::Set(df, scale);
  const VI abs_mask = hn::Set(di, 0x7FFF'FFFF);
  const VI inf_bits = hn::Set(di, 0x7F80'0000);
  const VI zero = hn::Zero(di);
  const VU normal_random_mask = hn::Set(du, (1u << shift) - 1u);
  const VI rebias_shifted = hn::Set(di, c.rebias << shift);
  const VI min_normal_bits = hn::Set(di, c.min_normal_bits);
  // total_shift = shift + (emin - (e_field - 127)) = subnormal_shift_base - e_field
  const VI subnormal_shift_base = hn::Set(di, shift + (c.min_normal_bits >> 23));
  const VU mantissa_mask = hn::Set(du, 0x7F'FFFFu);
  const VU implicit_bit = hn::Set(du, 0x80'0000u);
  const VI shift_limit = hn::Set(di, 32);
  const VI minus_one = hn::Set(di, -1);
  const VU one = hn::Set(du, 1u);
  const VI one_i = hn::Set(di, 1);
  const VI max_finite = hn::Set(di, c.max_finite_code);
  const VI finite_overflow = hn::Set(di, c.finite_overflow_code);
  const VI inf_code = hn::Set(di, c.inf_code);
  const VI nan_above = hn::Set(di, c.nan_above);
  const VI canonical_nan = hn::Set(di, kFp8CanonicalNan);
  const VI magnitude_mask = hn::Set(di, 0x7F);

  PhiloxLanes philox(seed, stream);

  VI amax_bits = zero;
  VI underflow_lanes = zero;  // per lane, the underflows of the vectors without overflow or NaN
  std::size_t saturated = 0, underflowed = 0, nan = 0, groups = 0;
  const auto flush_underflows = [&]() HWY_ATTR {
    const auto sum = hn::GetLane(hn::SumOfLanes(du, hn::BitCast(du, underflow_lanes)));
    underflow_lanes = zero;
    return static_cast<std::size_t>(sum);
  };
  std::size_t i = 0;
  while (i + lanes <= n) {
    // The words of kStochasticVectors vectors at a time (PhiloxLanes::BlockWords: one block per
    // four elements, the blocks of four half-vectors' rounds overlapping); the last group may use
    // fewer of them.
    VU randoms[kStochasticVectors];
    philox.BlockWords<kStochasticVectors / 2>(first_index + i, randoms);
    const std::size_t vectors = std::min<std::size_t>(kStochasticVectors, (n - i) / lanes);
    for (std::size_t q = 0; q < vectors; ++q, i += lanes) {
      hwy::Prefetch(x + i + kPrefetchBytes / sizeof(float));
      const VI x_bits = hn::BitCast(di, hn::LoadU(df, x + i));
      const VI x_abs = hn::And(x_bits, abs_mask);
      amax_bits = MaxIgnoringNaN(amax_bits, x_abs);
      const VU random = randoms[q];
      const VI y_bits = hn::BitCast(di, hn::Mul(hn::BitCast(df, x_bits), vscale));
      const VI a = hn::And(y_bits, abs_mask);
      const VU au = hn::BitCast(du, a);
      // normal range: (a + (r & (2^shift - 1)) - (rebias << shift)) >> shift
      VI code = hn::ShiftRightSame(
          hn::Sub(hn::BitCast(di, hn::Add(au, hn::And(random, normal_random_mask))),
                  rebias_shifted),
          shift);
      // Below it, only when some lane is there (with normal-range data most vectors have no such
      // lane): a variable shift of the significand.
      const auto below_normal = a < min_normal_bits;
      if (!hn::AllFalse(di, below_normal)) {
        const VU e_field = hn::ShiftRight<23>(au);
        const VI total_shift = hn::Sub(subnormal_shift_base, hn::BitCast(di, e_field));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
        // Highway's per-lane shifts are VPSLLVD and VPSRLVD here, which give 0 for a count of 32
        // or more, as the rule does, and read a negative count (normal-range lanes only, which
        // keep the normal code) as one. An fp32 subnormal (exponent field 0) has a shift of
        // subnormal_shift_base >= 32, so its significand may take the implicit bit too: 7
        // operations where the portable form below takes 17.
        const VU shift_u = hn::BitCast(du, total_shift);
        const VU significand = hn::Or(hn::And(au, mantissa_mask), implicit_bit);
        const VU random_low = hn::AndNot(hn::Set(du, ~0u) << shift_u, random);
        const VU subnormal = hn::Add(significand, random_low) >> shift_u;
        code = hn::IfThenElse(below_normal, hn::BitCast(di, subnormal), code);
#else
        const VU significand =
            hn::Or(hn::And(au, mantissa_mask),
                   hn::IfThenElseZero(hn::BitCast(du, e_field) != hn::Zero(du), implicit_bit));
        // Shifts of 32 or more give 0; negative ones occur only in normal-range lanes, which take
        // the normal result. Both are zeroed first: a shift count outside 0..31 is undefined per
        // lane.
        const auto usable = hn::And(total_shift > minus_one, total_shift < shift_limit);
        const VU shift_u = hn::BitCast(du, hn::IfThenElseZero(usable, total_shift));
        const VU random_low = hn::And(random, hn::Sub(one << shift_u, one));
        const VI subnormal = hn::IfThenElseZero(
            usable, hn::BitCast(di, hn::Add(significand, random_low) >> shift_u));
        code = hn::IfThenElse(below_normal, subnormal, code);
#endif
      }

      const auto y_nan = a > inf_bits;
      const auto overflow = code > max_finite;
      const VI sign =
          hn::BitCast(di, hn::ShiftRight<24>(hn::BitCast(DU32(), hn::AndNot(abs_mask, y_bits))));
      VI result;
      if (HWY_LIKELY(hn::AllFalse(di, hn::Or(y_nan, overflow)))) {
        // No lane overflows and no y is NaN (the common case): the code is a finite code (not a
        // NaN one), x is not NaN, and only underflows are counted, in lanes (+1 per true lane).
        result = hn::Or(code, sign);
        underflow_lanes = hn::IfThenElse(hn::AndNot(x_abs == zero, code == zero),
                                         hn::Add(underflow_lanes, one_i), underflow_lanes);
      } else {
        const VI overflow_code = hn::IfThenElse(a == inf_bits, inf_code, finite_overflow);
        const VI magnitude = hn::IfThenElse(overflow, overflow_code, code);
        result = hn::IfThenElse(y_nan, canonical_nan, hn::Or(magnitude, sign));
        saturated += hn::CountTrue(di, hn::AndNot(y_nan, overflow));
        nan += hn::CountTrue(di, hn::Or(y_nan, magnitude > nan_above));
        const auto x_nonzero_number = hn::AndNot(x_abs > inf_bits, hn::Not(x_abs == zero));
        underflowed +=
            hn::CountTrue(di, hn::And(x_nonzero_number, hn::And(result, magnitude_mask) == zero));
      }
      hn::StoreU(hn::U8FromU32(hn::BitCast(DU32(), result)), DU8(), out + i);
    }
    // The lanes' counts summed into underflowed now and then, before their 32-bit sum could wrap
    // (2^20 groups: at most 2^23 a lane).
    if (++groups == std::size_t{1} << 20) {
      underflowed += flush_underflows();
      groups = 0;
    }
  }
  underflowed += flush_underflows();
  QuantizeStats stats;
  stats.amax = std::bit_cast<float>(hn::GetLane(hn::MaxOfLanes(di, amax_bits)));
  stats.count = i;
  stats.saturated = saturated;
  stats.underflowed = underflowed;
  stats.nan = nan;
  return stats;
}

template <class Load>
float amax_vectors(std::size_t n, Load load, std::size_t& done) {
  const DI di;
  const std::size_t lanes = hn::Lanes(di);
  const VI abs_mask = hn::Set(di, 0x7FFF'FFFF);
  const VI inf_bits = hn::Set(di, 0x7F80'0000);
  VI amax_bits = hn::Zero(di);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    load.prefetch(i);
    const VI x_abs = hn::And(load(i), abs_mask);
    amax_bits = hn::Max(amax_bits, hn::IfThenZeroElse(x_abs > inf_bits, x_abs));
  }
  done = i;
  return std::bit_cast<float>(hn::GetLane(hn::MaxOfLanes(di, amax_bits)));
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

float AmaxF32(const float* x, std::size_t n, std::size_t& done) {
  return amax_vectors(n, LoadF32{x}, done);
}
float AmaxBF16(const std::uint16_t* x, std::size_t n, std::size_t& done) {
  return amax_vectors(n, LoadBF16{x}, done);
}

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::bulk
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/quantize_scaled.hpp"

namespace fp8lab::sim {
namespace bulk {
HWY_EXPORT(QuantizeF32);
HWY_EXPORT(QuantizeBF16);
HWY_EXPORT(AmaxF32);
HWY_EXPORT(AmaxBF16);
HWY_EXPORT(TargetName);
HWY_EXPORT(QuantizeStochasticF32);
HWY_EXPORT(QuantizeF32Scaled);
HWY_EXPORT(RunAmaxF32);
HWY_EXPORT(ColumnAmaxF32);
}  // namespace bulk

const char* bulk_target_name() { return HWY_DYNAMIC_DISPATCH(bulk::TargetName)(); }

void QuantizeStats::merge(const QuantizeStats& other) {
  amax = amax_update(amax, other.amax);
  count += other.count;
  saturated += other.saturated;
  underflowed += other.underflowed;
  nan += other.nan;
}

namespace {
// The whole vectors go through the dispatched kernel; the last x.size() % Lanes elements through
// the scalar reference itself. A non-finite scale (no recipe makes one: docs/numerics.md §2 turns an
// infinite scale into FLT_MAX) takes the scalar path for the whole span, which keeps the kernel's
// statistics simple (see quantize_vectors). T is the input's element (fp32, or bf16 bits).
template <class T, class Kernel, class Reference>
QuantizeStats quantize_vectors_then_tail(const char* function, Kernel kernel, Reference reference,
                                         std::span<const T> x, float scale, Format format,
                                         Overflow mode, std::span<std::uint8_t> out) {
  check_quantize_arguments(function, x.size(), out.size(), format);
  if (!std::isfinite(scale)) return reference(x, scale, format, mode, out);
  const bulk::CastConstants c = bulk::make_cast_constants(format, mode);
  QuantizeStats stats = kernel(x.data(), x.size(), scale, c, out.data());
  const std::size_t done = stats.count;
  stats.merge(reference(x.subspan(done), scale, format, mode, out.subspan(done)));
  return stats;
}
}  // namespace

QuantizeStats quantize(std::span<const float> x, float scale, Format format, Overflow mode,
                       std::span<std::uint8_t> out) {
  return quantize_vectors_then_tail("quantize", HWY_DYNAMIC_DISPATCH(bulk::QuantizeF32),
                                    &reference::quantize, x, scale, format, mode, out);
}

QuantizeStats quantize_bf16(std::span<const std::uint16_t> x, float scale, Format format,
                            Overflow mode, std::span<std::uint8_t> out) {
  return quantize_vectors_then_tail("quantize_bf16", HWY_DYNAMIC_DISPATCH(bulk::QuantizeBF16),
                                    &reference::quantize_bf16, x, scale, format, mode, out);
}

QuantizeStats quantize_stochastic(std::span<const float> x, float scale, Format format,
                                  Overflow mode, std::uint64_t seed, std::uint64_t stream,
                                  std::uint64_t first_index, std::span<std::uint8_t> out) {
  check_quantize_arguments("quantize_stochastic", x.size(), out.size(), format);
  const bulk::CastConstants c = bulk::make_cast_constants(format, mode);
  // The elements before the first index that starts a Philox block one by one, so that the lanes
  // draw whole blocks; then the vectors, then the tail one by one.
  const std::size_t head = std::min<std::size_t>(x.size(), (4 - first_index % 4) % 4);
  QuantizeStats stats = reference::quantize_stochastic(x.first(head), scale, format, mode, seed,
                                                       stream, first_index, out.first(head));
  stats.merge(HWY_DYNAMIC_DISPATCH(bulk::QuantizeStochasticF32)(
      x.data() + head, x.size() - head, scale, c, seed, stream, first_index + head,
      out.data() + head));
  const std::size_t done = stats.count;
  stats.merge(reference::quantize_stochastic(x.subspan(done), scale, format, mode, seed, stream,
                                             first_index + done, out.subspan(done)));
  return stats;
}

namespace {
// log2 of run when run is a power of two that holds whole vectors of every target (<= 16 lanes),
// else -1.
int whole_vector_log2(std::size_t run) {
  if (run < 16 || (run & (run - 1)) != 0) return -1;
  return std::countr_zero(run);
}

// Throws unless run >= 1 and scales holds the ceil(n / run) scales of n elements.
std::size_t check_runs(const char* function, std::size_t n, std::span<const float> scales,
                       std::size_t run) {
  const std::size_t runs = run == 0 ? 0 : (n + run - 1) / run;
  if (run == 0 || scales.size() < runs) {
    throw std::invalid_argument(std::string(function) + ": run = " + std::to_string(run) + ", " +
                                std::to_string(scales.size()) + " scales for " + std::to_string(n) +
                                " elements");
  }
  return runs;
}

// Whether every scale is finite: the largest |scale| as bits, a max over integers which the
// compiler vectorizes (a row of 128 x 1 blocks has a scale per element), below the bits of +Inf.
bool all_finite(std::span<const float> scales) {
  std::uint32_t largest = 0;
  for (const float s : scales) {
    largest = std::max(largest, std::bit_cast<std::uint32_t>(s) & 0x7FFF'FFFFu);
  }
  return largest < 0x7F80'0000u;
}

// quantize_scaled once its arguments are checked and its scales' finiteness is known.
QuantizeStats quantize_scaled_checked(std::span<const float> x, std::span<const float> scales,
                                      std::size_t run, bool scales_finite, Format format,
                                      Overflow mode, std::span<std::uint8_t> out) {
  const int log2_run = run == 1 ? -1 : whole_vector_log2(run);
  QuantizeStats stats;
  std::size_t done = 0;
  if (scales_finite && (run == 1 || log2_run >= 0)) {
    const bulk::CastConstants c = bulk::make_cast_constants(format, mode);
    stats = HWY_DYNAMIC_DISPATCH(bulk::QuantizeF32Scaled)(x.data(), x.size(), scales.data(),
                                                          log2_run, c, out.data());
    done = stats.count;
  }
  // The rest run by run (the tail of whole vectors lies inside one run: runs hold whole vectors).
  while (done < x.size()) {
    const std::size_t end = std::min(x.size(), (done / run + 1) * run);
    stats.merge(quantize(x.subspan(done, end - done), scales[done / run], format, mode,
                         out.subspan(done, end - done)));
    done = end;
  }
  return stats;
}
}  // namespace

QuantizeStats quantize_scaled(std::span<const float> x, std::span<const float> scales,
                              std::size_t run, Format format, Overflow mode,
                              std::span<std::uint8_t> out) {
  check_quantize_arguments("quantize_scaled", x.size(), out.size(), format);
  const std::size_t runs = check_runs("quantize_scaled", x.size(), scales, run);
  return quantize_scaled_checked(x, scales, run, all_finite(scales.first(runs)), format, mode, out);
}

QuantizeStats quantize_scaled_rows(std::span<const float> x, std::size_t cols,
                                   std::span<const float> scales, std::size_t run, Format format,
                                   Overflow mode, std::span<std::uint8_t> out) {
  check_quantize_arguments("quantize_scaled_rows", x.size(), out.size(), format);
  if (cols == 0 || x.size() % cols != 0) {
    throw std::invalid_argument("quantize_scaled_rows: cols = " + std::to_string(cols) +
                                " does not divide the " + std::to_string(x.size()) +
                                " elements into rows");
  }
  const std::size_t runs = check_runs("quantize_scaled_rows", cols, scales, run);
  const bool finite = all_finite(scales.first(runs));
  QuantizeStats stats;
  for (std::size_t offset = 0; offset < x.size(); offset += cols) {
    stats.merge(quantize_scaled_checked(x.subspan(offset, cols), scales, run, finite, format, mode,
                                        out.subspan(offset, cols)));
  }
  return stats;
}

std::size_t column_amax(std::span<const float> row, std::span<float> amax,
                        std::span<std::uint8_t> has_nan) {
  const std::size_t n = std::min({row.size(), amax.size(), has_nan.size()});
  return HWY_DYNAMIC_DISPATCH(bulk::ColumnAmaxF32)(row.data(), n, amax.data(), has_nan.data());
}

std::size_t run_amax(std::span<const float> x, std::size_t run, std::span<float> amax,
                     std::span<std::uint8_t> has_nan) {
  const int log2_run = whole_vector_log2(run);
  if (log2_run < 0) return 0;
  const std::size_t runs = std::min({x.size() / run, amax.size(), has_nan.size()});
  HWY_DYNAMIC_DISPATCH(bulk::RunAmaxF32)(x.data(), runs, log2_run, amax.data(), has_nan.data());
  return runs;
}

float amax(std::span<const float> x) {
  std::size_t done = 0;
  float result = HWY_DYNAMIC_DISPATCH(bulk::AmaxF32)(x.data(), x.size(), done);
  for (const float v : x.subspan(done)) result = amax_update(result, v);
  return result;
}

float amax_bf16(std::span<const std::uint16_t> x) {
  std::size_t done = 0;
  float result = HWY_DYNAMIC_DISPATCH(bulk::AmaxBF16)(x.data(), x.size(), done);
  for (const std::uint16_t v : x.subspan(done)) result = amax_update(result, bf16_to_fp32(v));
  return result;
}

}  // namespace fp8lab::sim
#endif  // HWY_ONCE
