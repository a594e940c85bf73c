// Device twins of the scalar casts in sim/cast.hpp (docs/numerics.md §1). Every function here is
// __host__ __device__ so that tests without a GPU also run the host instantiation against sim/
// (tests/gpu/cast_host_test.cpp, through gpu/cast_host.cu).
//
//   cast_rn<F, M>(y)            must equal sim::cast_fp32_to_fp8(y, F, M)
//   cast_stochastic<F, M>(y, r) must equal sim::cast_fp32_to_fp8_stochastic(y, F, M, r)
//   decode<F>(code)             must equal sim::decode_fp8(code, F)
//
// Constants come from sim/format.hpp only; no sim/ algorithm is included.
#pragma once

#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "sim/cast.hpp"  // the Overflow enum and kFp8CanonicalNan (declarations only)
#include "sim/format.hpp"

namespace fp8lab::gpu {

using sim::Format;
using sim::Overflow;

FP8LAB_HD inline std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

FP8LAB_HD inline float bits_float(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

// The correctly rounded IEEE operations of the kernels, one list so that each is spelt once. On
// the device each is its _rn intrinsic, so that no compiler setting can contract it into an FMA
// with a neighbouring add or replace a division by an approximation (STYLE.md §7); on the host,
// the plain operator (-ffp-contract=off, cmake/fp8lab_options.cmake).
#if defined(__CUDA_ARCH__)
#define FP8LAB_RN_OPERATION(name, type, intrinsic, op) \
  FP8LAB_HD inline type name(type a, type b) { return intrinsic(a, b); }
#else
#define FP8LAB_RN_OPERATION(name, type, intrinsic, op) \
  FP8LAB_HD inline type name(type a, type b) { return a op b; }
#endif
FP8LAB_RN_OPERATION(mul_rn, float, __fmul_rn, *)
FP8LAB_RN_OPERATION(add_rn, float, __fadd_rn, +)
FP8LAB_RN_OPERATION(div_rn, float, __fdiv_rn, /)
FP8LAB_RN_OPERATION(dadd_rn, double, __dadd_rn, +)
#undef FP8LAB_RN_OPERATION

FP8LAB_HD inline float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

constexpr std::uint32_t kF32AbsMask = 0x7FFF'FFFFu;
constexpr std::uint32_t kF32Inf = 0x7F80'0000u;

constexpr double pow2(int e) {
  double v = 1.0;
  for (; e > 0; --e) v *= 2.0;
  for (; e < 0; ++e) v /= 2.0;
  return v;
}

// Everything a cast needs about an FP8 format, derived from its FormatSpec. Only scalar
// constants reach device code (a class-type constexpr variable would need device storage).
template <Format F>
struct Fp8 {
  static_assert(sim::is_fp8(F), "Fp8<F>: F must be E4M3 or E5M2");
  static constexpr const sim::FormatSpec& spec() {
    return F == Format::E4M3 ? sim::kE4M3Spec : sim::kE5M2Spec;
  }
  static constexpr int kMantissaBits = spec().mantissa_bits;                     // E4M3 3, E5M2 2
  static constexpr int kBias = spec().bias;                                      // 7, 15
  static constexpr int kMinNormalExponent = spec().min_normal_exponent();        // -6, -14
  static constexpr int kMinSubnormalExponent = spec().min_subnormal_exponent();  // -9, -16
  static constexpr float kMinSubnormal = static_cast<float>(pow2(kMinSubnormalExponent));
  static constexpr std::uint32_t kHalfMinSubnormalBits =  // fp32 bits of 2^(min_subnormal - 1)
      static_cast<std::uint32_t>(kMinSubnormalExponent - 1 + 127) << 23;
  static constexpr std::uint32_t kMantissaMask = spec().mantissa_mask();
  static constexpr std::uint32_t kMaxExponentField = spec().max_exponent_field();
  static constexpr bool kIeee = spec().special == sim::Special::kIeee;  // E5M2: Inf and NaNs
  static constexpr std::uint32_t kSign = spec().sign_mask();            // 0b1'0000'000
  static constexpr std::uint32_t kMagnitudeMask = ~kSign & 0xFFu;       // 0b0'1111'111
  static constexpr std::uint32_t kMaxCode = spec().max_finite_code();   // E4M3 0x7E, E5M2 0x7B
  static constexpr float kMaxFinite = static_cast<float>(spec().max_finite());  // 448, 57344
  static constexpr int kMaxExponent = spec().max_exponent();                    // 8, 15
  // (float)(1.0 / max): E4M3 0x3B124925, E5M2 0x37924925 (te-accelerate.md §4.3).
  static constexpr float kReciprocalOfMax = static_cast<float>(1.0 / spec().max_finite());
  // RNE leaves the finite range exactly when |y| passes max + half an ulp of max's binade
  // (E4M3: 448 + 16 = 464, E5M2: 57344 + 4096 = 61440). At the tie itself RNE goes to the even
  // neighbour: max when max's mantissa is even (E4M3 0b110), past max when it is odd (E5M2 0b11).
  static constexpr float kOverflowTie = static_cast<float>(
      spec().max_finite() + pow2(spec().max_exponent() - spec().mantissa_bits - 1));
  static constexpr bool kTieOverflows = (kMaxCode & 1u) != 0;
  // The code of an overflowing magnitude when not saturating: Inf where the format has one
  // (E5M2 0b0'11111'00), else the NaN (E4M3 0b0'1111'111).
  static constexpr std::uint32_t kOverflowNoSat = kIeee ? kMaxExponentField << kMantissaBits
                                                        : (kMaxExponentField << kMantissaBits) |
                                                              kMantissaMask;

  FP8LAB_HD static constexpr std::uint32_t overflow_code(Overflow mode, bool is_inf) {
    const bool saturate = mode == Overflow::kSatFinite ||
                          (mode == Overflow::kSatKeepInf && !is_inf);
    return saturate ? kMaxCode : kOverflowNoSat;
  }
  FP8LAB_HD static bool is_nan_code(std::uint32_t code) {
    const std::uint32_t m = code & kMagnitudeMask;
    if (kIeee) return (m >> kMantissaBits) == kMaxExponentField && (m & kMantissaMask) != 0;
    return m == kMagnitudeMask;  // E4M3: s.1111.111 only
  }
  // Whether RNE of y (not NaN) overflows the finite range; ±Inf included.
  FP8LAB_HD static bool rn_overflows(float y) {
    const float a = fabsf(y);
    return a > kOverflowTie || (kTieOverflows && a == kOverflowTie);
  }
};

// The hardware conversion with __NV_SATFINITE: cvt.rn.satfinite.{e4m3,e5m2}x2.f32 on sm_89 and
// newer; cuda_fp8.h's software conversion on older targets and on the host (the same code that
// tests/sim/cast_cuda_oracle_test.cpp proves equal to sim on all 2^32 inputs).
template <Format F>
FP8LAB_HD inline std::uint32_t cvt_satfinite(float y) {
  constexpr __nv_fp8_interpretation_t kind = F == Format::E4M3 ? __NV_E4M3 : __NV_E5M2;
  return __nv_cvt_float_to_fp8(y, __NV_SATFINITE, kind);
}
template <Format F>
FP8LAB_HD inline std::uint32_t cvt_satfinite_x2(float lo, float hi) {  // lo in bits 0..7
  constexpr __nv_fp8_interpretation_t kind = F == Format::E4M3 ? __NV_E4M3 : __NV_E5M2;
  return __nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, kind);
}

// RNE cast of y given its satfinite conversion `sat`: NaN becomes CUDA's canonical 0x7F (sign
// dropped, as sim does), and the non-saturating modes replace an overflowing result.
template <Format F, Overflow M>
FP8LAB_HD inline std::uint32_t fix_rn(float y, std::uint32_t sat) {
  using T = Fp8<F>;
  const std::uint32_t bits = float_bits(y);
  const std::uint32_t a = bits & kF32AbsMask;
  if (a > kF32Inf) return sim::kFp8CanonicalNan;
  // At most half the smallest subnormal (E4M3 2^-10, E5M2 2^-17; the tie goes to even 0): ±0,
  // decided here so that the result does not depend on how the conversion instruction treats
  // fp32 denormal inputs (flushed or not, sign kept or not).
  if (a <= T::kHalfMinSubnormalBits) return (bits >> 31) != 0 ? T::kSign : 0u;
  if (M != Overflow::kSatFinite && T::rn_overflows(y)) {
    return ((bits >> 31) != 0 ? T::kSign : 0u) | T::overflow_code(M, a == kF32Inf);
  }
  return sat & 0xFFu;
}

template <Format F, Overflow M>
FP8LAB_HD inline std::uint8_t cast_rn(float y) {
  return static_cast<std::uint8_t>(fix_rn<F, M>(y, cvt_satfinite<F>(y)));
}

// Two casts through one paired conversion instruction; codes in bits 0..7 (lo) and 8..15 (hi).
template <Format F, Overflow M>
FP8LAB_HD inline std::uint32_t cast_rn_x2(float lo, float hi) {
  const std::uint32_t pair = cvt_satfinite_x2<F>(lo, hi);
  return fix_rn<F, M>(lo, pair & 0xFFu) | (fix_rn<F, M>(hi, pair >> 8) << 8);
}

// Result of a stochastic cast: the code, and whether the overflow rule applied (for statistics).
struct StochasticCode {
  std::uint32_t code;
  bool overflowed;
};

// Stochastic rounding on the fp32 bit pattern (docs/numerics.md §1): add the low bits of `random`
// that truncation will drop (all dropped bits: 20 for E4M3 normals, more for target subnormals),
// then truncate. Steps, for |y| with fp32 bits a:
//   1. NaN -> 0x7F; ±Inf -> the overflow code of the mode.
//   2. Target normal (unbiased exponent >= 1 - bias): add r mod 2^(23 - M) to a and drop those
//      bits; a mantissa carry walks into the next binade, which is the right code. Rebias.
//   3. Target subnormal: significand 1.m (or 0.m for fp32 subnormals) shifted right by
//      (23 - M) + (1 - bias - exponent); 32 or more leaves nothing (code 0 whatever r is).
//   4. A code above max finite takes the overflow code of the mode.
template <Format F, Overflow M>
FP8LAB_HD inline StochasticCode cast_stochastic_with_flag(float y, std::uint32_t random) {
  using T = Fp8<F>;
  constexpr int kShift = 23 - T::kMantissaBits;  // E4M3: 20, E5M2: 21
  constexpr int kRebias = 127 - T::kBias;
  const std::uint32_t bits = float_bits(y);
  const std::uint32_t sign = (bits >> 31) != 0 ? T::kSign : 0u;
  const std::uint32_t a = bits & kF32AbsMask;
  if (a > kF32Inf) return {sim::kFp8CanonicalNan, false};
  if (a == kF32Inf) return {sign | T::overflow_code(M, true), true};
  const int exponent = static_cast<int>(a >> 23) - 127;
  std::uint32_t code;
  if (exponent >= T::kMinNormalExponent) {
    const std::uint32_t rounded = a + (random & ((1u << kShift) - 1u));
    code = (rounded >> kShift) - (static_cast<std::uint32_t>(kRebias) << T::kMantissaBits);
  } else {
    const std::uint32_t significand = (a & 0x7F'FFFFu) | ((a >> 23) != 0 ? 0x80'0000u : 0u);
    const int total = kShift + (T::kMinNormalExponent - exponent);
    if (total >= 32) {
      code = 0;
    } else {
      const std::uint64_t wide = significand;
      code = static_cast<std::uint32_t>((wide + (random & ((1u << total) - 1u))) >> total);
    }
  }
  if (code > T::kMaxCode) return {sign | T::overflow_code(M, false), true};
  return {sign | code, false};
}

template <Format F, Overflow M>
FP8LAB_HD inline std::uint8_t cast_stochastic(float y, std::uint32_t random) {
  return static_cast<std::uint8_t>(cast_stochastic_with_flag<F, M>(y, random).code);
}

// Exact value of an FP8 code (E4M3 or E5M2), built from the fp32 bit pattern:
//   normal    (e > 0): bits = s | (e - bias + 127) << 23 | m << (23 - M)
//   subnormal (e = 0): m * 2^(1 - bias - M), an exact product of small integers and a power of 2
//   E5M2 e all ones: Inf (m = 0) or NaN; E4M3 s.1111.111: NaN.
template <Format F>
FP8LAB_HD inline float decode(std::uint32_t code) {
  using T = Fp8<F>;
  constexpr int kM = T::kMantissaBits;
  const std::uint32_t sign = (code & T::kSign) != 0 ? 0x8000'0000u : 0u;
  const std::uint32_t magnitude = code & T::kMagnitudeMask;
  const std::uint32_t e = magnitude >> kM;
  const std::uint32_t m = magnitude & T::kMantissaMask;
  if (T::is_nan_code(code)) return bits_float(0x7FC0'0000u | sign);
  if (T::kIeee && e == T::kMaxExponentField) return bits_float(kF32Inf | sign);
  if (e == 0) {
    const float v = mul_rn(static_cast<float>(m), T::kMinSubnormal);
    return sign != 0 ? -v : v;
  }
  const std::uint32_t f32_exponent = e - static_cast<std::uint32_t>(T::kBias) + 127u;
  return bits_float(sign | (f32_exponent << 23) | (m << (23 - kM)));
}

// bf16 bits -> fp32: exact, the bf16 pattern is the top half of the fp32 pattern.
FP8LAB_HD inline float bf16_to_float(std::uint16_t bits) {
  return bits_float(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace fp8lab::gpu
