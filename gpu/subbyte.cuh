// Device twin of sim's sub-byte cast (sim/cast.hpp, docs/fp4.md):
//
//   cast_subbyte<F>(x, specials)  must equal sim::cast_fp32_to_subbyte(x, F, specials)
//
// F is E2M1, E2M3 or E3M2. Integer arithmetic on the fp32 bit pattern, as sim's generic cast:
// Hopper has no cvt to these formats (sm_100 adds cvt.rn.satfinite.e2m1x2), and a NaN's code
// differs by peer (SubbyteSpecials). __host__ __device__: the host twins run it against sim/.
#pragma once

#include <cstdint>

#include "gpu/cast.cuh"
#include "sim/cast.hpp"  // SubbyteSpecials and its presets (constants only)
#include "sim/format.hpp"

namespace fp8lab::gpu {

using sim::SubbyteNan;
using sim::SubbyteSpecials;

template <Format F>
struct Subbyte {
  static_assert(sim::is_subbyte(F), "Subbyte<F>: F must be E2M1, E2M3 or E3M2");
  static constexpr int kMantissaBits = sim::spec(F).mantissa_bits;
  static constexpr int kBias = sim::spec(F).bias;
  static constexpr int kMinNormalExponent = sim::spec(F).min_normal_exponent();
  static constexpr std::uint32_t kSign = sim::spec(F).sign_mask();
  static constexpr std::uint32_t kMaxCode = sim::spec(F).max_finite_code();
};

// |x| (fp32 bits a, not NaN or Inf; or a NaN's bits, which take the normal branch as in sim)
// rounded to nearest even onto F's grid, sign excluded: sim/cast.cpp round_magnitude.
template <Format F>
FP8LAB_HD inline std::uint32_t subbyte_round_magnitude(std::uint32_t a) {
  using T = Subbyte<F>;
  constexpr int kShift = 23 - T::kMantissaBits;
  const int exponent = static_cast<int>(a >> 23) - 127;
  if (exponent >= T::kMinNormalExponent) {
    const std::uint32_t rounded = a + ((1u << (kShift - 1)) - 1u) + ((a >> kShift) & 1u);
    return (rounded >> kShift) - (static_cast<std::uint32_t>(127 - T::kBias) << T::kMantissaBits);
  }
  const bool f32_subnormal = (a >> 23) == 0;
  const std::uint32_t significand = (a & 0x7F'FFFFu) | (f32_subnormal ? 0u : 0x80'0000u);
  const int total_shift = kShift + (T::kMinNormalExponent - exponent);
  if (total_shift >= 32) return 0;
  const std::uint64_t wide = significand;
  const std::uint64_t increment = ((std::uint64_t{1} << (total_shift - 1)) - 1u) +
                                  ((significand >> total_shift) & 1u);
  return static_cast<std::uint32_t>((wide + increment) >> total_shift);
}

template <Format F>
FP8LAB_HD inline std::uint8_t cast_subbyte(float x, SubbyteSpecials specials) {
  using T = Subbyte<F>;
  const std::uint32_t bits = float_bits(x);
  if (!specials.keep_negative_zero && bits == 0x8000'0000u) return 0;
  const std::uint32_t sign = (bits >> 31) != 0 ? T::kSign : 0u;
  const std::uint32_t a = bits & kF32AbsMask;
  if (a > kF32Inf) {
    switch (specials.nan) {
      case SubbyteNan::kPositiveMax: return static_cast<std::uint8_t>(T::kMaxCode);
      case SubbyteNan::kOppositeZero: return static_cast<std::uint8_t>(sign ^ T::kSign);
      case SubbyteNan::kPositiveZero: return 0;
      case SubbyteNan::kRoundedAllOnes:
        return static_cast<std::uint8_t>(subbyte_round_magnitude<F>(0x7FFF'FFFFu) | T::kSign);
      case SubbyteNan::kRoundedBits: break;
    }
    return static_cast<std::uint8_t>(subbyte_round_magnitude<F>(a) | sign);
  }
  if (a == kF32Inf) return static_cast<std::uint8_t>(sign | T::kMaxCode);
  const std::uint32_t code = subbyte_round_magnitude<F>(a);
  return static_cast<std::uint8_t>(sign | (code > T::kMaxCode ? T::kMaxCode : code));
}

// The same with the format chosen at run time (host entry points and tests).
FP8LAB_HD inline std::uint8_t cast_subbyte(float x, Format format, SubbyteSpecials specials) {
  switch (format) {
    case Format::E2M1: return cast_subbyte<Format::E2M1>(x, specials);
    case Format::E2M3: return cast_subbyte<Format::E2M3>(x, specials);
    default: return cast_subbyte<Format::E3M2>(x, specials);
  }
}

}  // namespace fp8lab::gpu
