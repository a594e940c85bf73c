// One description per number format. Every limit, bias, NaN encoding and decode table in fp8lab
// (sim/, gpu/, tests, docs) is derived from the FormatSpec values below; nothing writes a bias or
// a max twice. Header-only and constexpr so that gpu/ includes it as its only piece of sim/.
//
// Bit layouts (s = sign, e = exponent, m = mantissa), docs/numerics.md §1:
//
//   E4M3 (OCP e4m3fn)  s eeee mmm       bias 7   no Inf; NaN = s.1111.111 only
//   E5M2               s eeeee mm       bias 15  IEEE-like: Inf = s.11111.00, NaN = s.11111.{01,10,11}
//   E8M0 (UE8M0 scale) eeeeeeee         bias 127 unsigned, no mantissa, value 2^(e-127); NaN = 0xFF
//   E2M3 (FP6)         s ee mmm         bias 1   no Inf, no NaN        (OCP MX v1.0; sub-byte formats:
//   E3M2 (FP6)         s eee mm         bias 3   no Inf, no NaN         codes in the low bits of a
//   E2M1 (FP4)         s ee m           bias 1   no Inf, no NaN         byte, E2M1 packed two a byte)
//   BF16 / FP16 / FP32 IEEE 754 binary formats
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define FP8LAB_HD __host__ __device__
#else
#define FP8LAB_HD
#endif

namespace fp8lab::sim {

enum class Format : std::uint8_t { E4M3, E5M2, E8M0, E2M3, E3M2, E2M1, BF16, FP16, FP32 };

// How a format spends the top of its exponent range.
enum class Special : std::uint8_t {
  kIeee,       // exponent all ones: Inf (mantissa 0) or NaN (mantissa != 0)       E5M2, BF16, FP16
  kFnNanOnly,  // only exponent and mantissa all ones is NaN; no Inf ("fn" formats)  E4M3
  kUnsignedNan,  // no sign, no mantissa; the all-ones code is NaN                    E8M0
  kNone,         // every code is a finite number                                     FP6, FP4
};

struct FormatSpec {
  const char* name;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool is_signed;
  Special special;

  FP8LAB_HD constexpr int total_bits() const {
    return (is_signed ? 1 : 0) + exponent_bits + mantissa_bits;
  }
  FP8LAB_HD constexpr std::uint32_t sign_mask() const {
    return is_signed ? (1u << (exponent_bits + mantissa_bits)) : 0u;
  }
  FP8LAB_HD constexpr std::uint32_t max_exponent_field() const { return (1u << exponent_bits) - 1; }
  FP8LAB_HD constexpr std::uint32_t mantissa_mask() const { return (1u << mantissa_bits) - 1; }

  // Largest finite magnitude as a code (sign bit clear).
  //   kIeee:      exponent all ones is reserved -> e = 1..10, m = 11..1   (E5M2: 0b0'11110'11 = 0x7B)
  //   kFnNanOnly: only m all ones is NaN at the top exponent -> m = 1..10 (E4M3: 0b0'1111'110 = 0x7E)
  //   kUnsignedNan: 0xFF is NaN -> 0xFE;  kNone: every bit set.
  FP8LAB_HD constexpr std::uint32_t max_finite_code() const {
    switch (special) {
      case Special::kIeee: return ((max_exponent_field() - 1) << mantissa_bits) | mantissa_mask();
      case Special::kFnNanOnly:
        return (max_exponent_field() << mantissa_bits) | (mantissa_mask() - 1);
      case Special::kUnsignedNan: return max_exponent_field() - 1;
      case Special::kNone: break;
    }
    return (max_exponent_field() << mantissa_bits) | mantissa_mask();
  }

  // Unbiased exponent of the largest finite value and of the smallest normal value.
  FP8LAB_HD constexpr int max_exponent() const {
    return static_cast<int>(max_finite_code() >> mantissa_bits) - bias;
  }
  FP8LAB_HD constexpr int min_normal_exponent() const { return 1 - bias; }
  // The smallest subnormal is 2^(1 - bias - mantissa_bits) (E4M3: 2^-9, E5M2: 2^-16); E8M0 has no
  // subnormals, its smallest value is 2^-bias.
  FP8LAB_HD constexpr int min_subnormal_exponent() const {
    return special == Special::kUnsignedNan ? -bias : 1 - bias - mantissa_bits;
  }

  // Largest finite value as a double: (1 + m_max / 2^M) * 2^emax.  E4M3: 1.75 * 2^8 = 448;
  // E5M2: 1.75 * 2^15 = 57344; E8M0: 2^127.
  FP8LAB_HD constexpr double max_finite() const {
    const std::uint32_t code = max_finite_code();
    const double fraction = 1.0 + static_cast<double>(code & mantissa_mask()) /
                                      static_cast<double>(1u << mantissa_bits);
    double value = fraction;
    for (int e = 0; e < max_exponent(); ++e) value *= 2.0;
    for (int e = 0; e > max_exponent(); --e) value /= 2.0;
    return value;
  }

  // How many codes one byte of storage holds: two 4-bit codes (E2M1: element 2i in the low
  // nibble, 2i+1 in the high one, as torchao's pack_uint4, TE and the hardware store FP4); one
  // code otherwise (FP6 one code per byte in bits 0-5, unpacked, as torchao keeps it).
  FP8LAB_HD constexpr int codes_per_byte() const { return total_bits() <= 4 ? 2 : 1; }

  FP8LAB_HD constexpr bool has_inf() const { return special == Special::kIeee; }
  FP8LAB_HD constexpr bool has_nan() const { return special != Special::kNone; }
};

// clang-format off
//                                         name    e  m  bias  signed  special
inline constexpr FormatSpec kE4M3Spec   = {"e4m3", 4, 3, 7,    true,   Special::kFnNanOnly};
inline constexpr FormatSpec kE5M2Spec   = {"e5m2", 5, 2, 15,   true,   Special::kIeee};
inline constexpr FormatSpec kE8M0Spec   = {"e8m0", 8, 0, 127,  false,  Special::kUnsignedNan};
inline constexpr FormatSpec kE2M3Spec   = {"e2m3", 2, 3, 1,    true,   Special::kNone};
inline constexpr FormatSpec kE3M2Spec   = {"e3m2", 3, 2, 3,    true,   Special::kNone};
inline constexpr FormatSpec kE2M1Spec   = {"e2m1", 2, 1, 1,    true,   Special::kNone};
inline constexpr FormatSpec kBF16Spec   = {"bf16", 8, 7, 127,  true,   Special::kIeee};
inline constexpr FormatSpec kFP16Spec   = {"fp16", 5, 10, 15,  true,   Special::kIeee};
inline constexpr FormatSpec kFP32Spec   = {"fp32", 8, 23, 127, true,   Special::kIeee};
// clang-format on

// Host and compile-time only (not FP8LAB_HD): it returns namespace-scope constants that have no
// device copy, so nvcc rejects it in device code. Kernels take scalar constants from it at
// compile time (see gpu/cast.cuh).
constexpr const FormatSpec& spec(Format f) {
  switch (f) {
    case Format::E4M3: return kE4M3Spec;
    case Format::E5M2: return kE5M2Spec;
    case Format::E8M0: return kE8M0Spec;
    case Format::E2M3: return kE2M3Spec;
    case Format::E3M2: return kE3M2Spec;
    case Format::E2M1: return kE2M1Spec;
    case Format::BF16: return kBF16Spec;
    case Format::FP16: return kFP16Spec;
    case Format::FP32: break;
  }
  return kFP32Spec;
}

// Derivations checked at compile time against docs/numerics.md §1's table.
static_assert(kE4M3Spec.max_finite_code() == 0b0'1111'110 && kE4M3Spec.max_finite() == 448.0);
static_assert(kE5M2Spec.max_finite_code() == 0b0'11110'11 && kE5M2Spec.max_finite() == 57344.0);
static_assert(kE8M0Spec.max_finite_code() == 0xFE && kE8M0Spec.max_exponent() == 127);
static_assert(kE4M3Spec.min_subnormal_exponent() == -9 &&
              kE5M2Spec.min_subnormal_exponent() == -16);
static_assert(kE8M0Spec.min_subnormal_exponent() == -127);
static_assert(kE2M3Spec.max_finite() == 7.5 && kE3M2Spec.max_finite() == 28.0 &&
              kE2M1Spec.max_finite() == 6.0);
static_assert(kBF16Spec.max_finite_code() == 0x7F7F && kFP16Spec.max_finite() == 65504.0);

// The formats a tensor may be quantized to (element formats, not scale formats).
FP8LAB_HD constexpr bool is_fp8(Format f) { return f == Format::E4M3 || f == Format::E5M2; }
// The element formats narrower than a byte (E2M1, E2M3, E3M2): no Inf and no NaN codes.
constexpr bool is_subbyte(Format f) { return spec(f).total_bits() < 8; }

static_assert(is_subbyte(Format::E2M1) && is_subbyte(Format::E2M3) && is_subbyte(Format::E3M2));
static_assert(!is_subbyte(Format::E4M3) && !is_subbyte(Format::E8M0) && !is_subbyte(Format::BF16));

// The two FP8 element formats (E8M0 is a scale format), for the checks that sweep both.
inline constexpr Format kFp8Formats[] = {Format::E4M3, Format::E5M2};

static_assert(kE2M1Spec.codes_per_byte() == 2 && kE2M3Spec.codes_per_byte() == 1 &&
              kE4M3Spec.codes_per_byte() == 1);
static_assert(kE2M1Spec.max_finite_code() == 0x7 && kE2M3Spec.max_finite_code() == 0x1F &&
              kE3M2Spec.max_finite_code() == 0x1F && kE2M1Spec.sign_mask() == 0x8 &&
              kE3M2Spec.sign_mask() == 0x20);

}  // namespace fp8lab::sim
