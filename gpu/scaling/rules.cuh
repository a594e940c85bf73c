// The scale rules of the scaling recipes (docs/numerics.md §2), device twins of sim/scaling/:
//   te_scale_from_amax           = sim::scaling::te_scale_from_amax        (te-accelerate.md §5.1)
//   torchao_scale_from_amax      = sim::scaling::torchao_scale_from_amax   (torchao-mx.md §2.1)
//   mx_scale_code / mx_multiplier = sim::scaling::mx_scale_code / mx_element_multiplier (§4.3)
//   mx_block_multiplier          = sim::scaling::mx_block_multiplier (torchao-0.18 / -main)
// Each returns what a block needs: the multiplier applied before the cast, the dequantization
// factor stored with the tensor, and (MX) the E8M0 code. __host__ __device__: the host twin
// (gpu/scaling/host_twin.cu) runs them against sim/ without a GPU.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "gpu/cast.cuh"
#include "sim/settings.hpp"

namespace fp8lab::gpu::scaling {

// The MX settings are sim's own types (sim/settings.hpp), imported by name, not copied.
using sim::scaling::E8M0Mode;
using sim::scaling::TorchaoVersion;

struct BlockScale {
  float scale;      // multiplier before the cast
  float scale_inv;  // dequantization factor
  std::uint8_t e8m0;
};

// TE compute_scale_from_amax: eps clamp (NaN compares false), 1.0 for amax Inf/0/NaN,
// RN(fp8_max / amax), +Inf -> value_for_inf, pow2: keep sign and exponent (round down).
FP8LAB_HD inline float te_scale_from_amax(float amax, float fp8_max, bool pow2, float eps,
                                          float value_for_inf) {
  if (amax < eps) amax = eps;
  if (std::isinf(amax) || amax == 0.0f || std::isnan(amax)) return 1.0f;
  float s = div_rn(fp8_max, amax);
  if (std::isinf(s)) s = value_for_inf;
  if (pow2) s = bits_float(float_bits(s) & 0xFF80'0000u);
  return s;
}

// A NaN scale or scale_inv is written as 0x7FC00000, the quiet NaN sim produces (the NaN amax
// sim feeds the division). Device arithmetic returns 0x7FFFFFFF for a NaN result instead, and
// scales are compared bit for bit (seen on an H200: docs/device-log.md, run 1).
FP8LAB_HD inline float canonical_nan(float x) {
  return std::isnan(x) ? bits_float(0x7FC0'0000u) : x;
}

// sim::scaling::torch_log2_f32: fp32(log2(double(x))). On the device the log2 is CUDA's double
// log2 (at most 1 ulp from the correctly rounded value, which sim uses), then rounded to fp32:
// the two can differ only if a double log2 lands within 1 ulp of an fp32 rounding boundary
// (never observed; the gpu tests would report it as a mismatch).
FP8LAB_HD inline float torch_log2_f32(float x) {
  return static_cast<float>(std::log2(static_cast<double>(x)));
}

// torchao amax_to_scale: one float64 division rounded once to fp32, amax clamped below at 1e-12
// (NaN kept). pow2: exp2(floor(torch_log2_f32(s))). floor of a finite value is an integer, whose
// exp2 is built exactly with ldexpf; -Inf (s = 0) gives 0 and NaN stays NaN, as exp2 does.
FP8LAB_HD inline float torchao_scale_from_amax(float amax, float fp8_max, bool pow2) {
  const double a = static_cast<double>(amax);
  const double clamped = std::isnan(a) ? a : (a > 1e-12 ? a : 1e-12);
#if defined(__CUDA_ARCH__)
  float s = __double2float_rn(__ddiv_rn(static_cast<double>(fp8_max), clamped));
#else
  float s = static_cast<float>(static_cast<double>(fp8_max) / clamped);
#endif
  if (pow2) {
    const float l = std::floor(torch_log2_f32(s));
    s = std::isfinite(l) ? std::ldexp(1.0f, static_cast<int>(l)) : std::exp2(l);
  }
  return canonical_nan(s);
}

// 2^(code - 127) for code 0..254 (code 0: 2^-127, an fp32 subnormal), NaN for 0xFF.
FP8LAB_HD inline float decode_e8m0(std::uint32_t code) {
  if (code == 0xFFu) return bits_float(0x7FC0'0000u);
  return code == 0 ? bits_float(0x0040'0000u) : bits_float(code << 23);
}

// TE float_to_e8m0 (round up, satfinite): NaN 0xFF, Inf 0xFE, 0 -> 0; else exponent field E,
// plus 1 when the mantissa M > 0, E != 0xFE and not (E == 0 and M <= 2^22).
FP8LAB_HD inline std::uint32_t te_float_to_e8m0(float v) {
  if (std::isnan(v)) return 0xFFu;
  if (std::isinf(v)) return 0xFEu;
  if (v == 0.0f) return 0u;
  const std::uint32_t u = float_bits(v);
  std::uint32_t e = (u >> 23) & 0xFFu;  // v >= 0 in use (an amax product)
  const std::uint32_t m = u & 0x7F'FFFFu;
  if (m > 0 && e != 0xFEu && !(e == 0 && m <= 0x40'0000u)) ++e;
  return e & 0xFFu;
}

// cvt.rp.ue8m0 without satfinite (torchao rceil): non-finite -> 0xFF; E + (E == 0 ? M > 2^22 : M != 0).
FP8LAB_HD inline std::uint32_t rceil_float_to_e8m0(float v) {
  if (!std::isfinite(v)) return 0xFFu;
  const std::uint32_t u = float_bits(v);
  const std::uint32_t e = (u >> 23) & 0xFFu, m = u & 0x7F'FFFFu;
  return (e + (e == 0 ? (m > 0x40'0000u ? 1u : 0u) : (m != 0 ? 1u : 0u))) & 0xFFu;
}

// The element format's constants the E8M0 rules read, from its FormatSpec: the same for FP8
// (MXFP8) and the sub-byte formats (MXFP4, MXFP6; sim/format.hpp), as in sim's rules.
template <Format F>
struct MxElement {
  static constexpr int kMantissaBits = sim::spec(F).mantissa_bits;
  static constexpr int kMaxExponent = sim::spec(F).max_exponent();  // torchao's target_max_pow2
  static constexpr float kMaxFinite = static_cast<float>(sim::spec(F).max_finite());
  static constexpr float kReciprocalOfMax = static_cast<float>(1.0 / sim::spec(F).max_finite());
};

// torchao v0.18.0 _to_mx_rceil (torchao-mx.md §4.3; sim::scaling mx.cpp): d = amax / fp8_max
// (IEEE division), 255 for NaN, 254 for Inf, else clamp(ceil(torch_log2_f32(d)), -127, 127) + 127
// (log2 of 0 is -Inf: code 0).
template <Format F>
FP8LAB_HD inline std::uint32_t torchao_0_18_rceil(float amax) {
  const float d = div_rn(amax, MxElement<F>::kMaxFinite);
  if (std::isnan(d)) return 0xFFu;
  if (std::isinf(d)) return 0xFEu;
  float e = std::ceil(torch_log2_f32(d));
  e = e < -127.0f ? -127.0f : (e > 127.0f ? 127.0f : e);
  return static_cast<std::uint32_t>(e + 127.0f);
}

// The E8M0 code of a block with this amax (amax already follows the mode's NaN rule).
template <Format F>
FP8LAB_HD inline std::uint32_t mx_scale_code(float amax, E8M0Mode mode, TorchaoVersion torchao) {
  using T = MxElement<F>;
  switch (mode) {
    case E8M0Mode::kTe: return te_float_to_e8m0(mul_rn(amax, T::kReciprocalOfMax));
    case E8M0Mode::kRceil:
      return torchao == TorchaoVersion::kV0_18
                 ? torchao_0_18_rceil<F>(amax)
                 : rceil_float_to_e8m0(mul_rn(amax, T::kReciprocalOfMax));
    case E8M0Mode::kFloor:
    case E8M0Mode::kCeil:
    case E8M0Mode::kEven: break;
  }
  // OCP floor / torchao ceil and even (torchao-mx.md §4.2): a NaN amax gives 255; an infinite
  // (or `even`-rounded to Inf) one too at main, while v0.18 keeps its exponent field 255 (§4.3).
  std::uint32_t u = float_bits(amax);
  if (mode == E8M0Mode::kEven) {
    constexpr std::uint32_t kHalfUlp = 1u << (23 - T::kMantissaBits - 1);
    u = (u + kHalfUlp) & 0xFF80'0000u;
  }
  if (std::isnan(amax)) return 0xFFu;
  if (torchao == TorchaoVersion::kMain && !std::isfinite(bits_float(u))) return 0xFFu;
  int e = static_cast<int>((u >> 23) & 0xFFu) - 127;
  if (mode == E8M0Mode::kCeil && (u & 0x7F'FFFFu) != 0) e += 1;
  int s = e - T::kMaxExponent;
  s = s < -127 ? -127 : (s > 128 ? 128 : s);
  return static_cast<std::uint32_t>(s + 127);
}

// 2^(127 - e) as fp32: e = 255 -> NaN, else decode_e8m0(254 - e).
FP8LAB_HD inline float mx_multiplier(std::uint32_t e) {
  return e == 0xFFu ? bits_float(0x7FC0'0000u) : decode_e8m0(254u - e);
}

// The multiplier of a block with code e: mx_multiplier for te and torchao main; torchao v0.18
// rceil uses 1.0 for e = 0; v0.18 floor/ceil/even divide by max(2^(e - 127), 2^-126) (+Inf for
// e = 255), which is the exact multiplier 2^126 for e = 0 and 0 for e = 255.
FP8LAB_HD inline float mx_block_multiplier(std::uint32_t e, E8M0Mode mode, TorchaoVersion torchao) {
  if (mode == E8M0Mode::kTe || torchao == TorchaoVersion::kMain) return mx_multiplier(e);
  if (mode == E8M0Mode::kRceil) return e == 0 ? 1.0f : mx_multiplier(e);
  if (e == 0xFFu) return 0.0f;
  return mx_multiplier(e == 0 ? 1u : e);
}

}  // namespace fp8lab::gpu::scaling
