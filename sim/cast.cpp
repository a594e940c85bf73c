// Scalar casts, computed on the fp32 bit pattern so that no wider type can round twice.
#include "sim/cast.hpp"
#include "sim/decode_table.hpp"
#include "sim/name_table.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace fp8lab::sim {
namespace {

constexpr std::uint32_t kF32AbsMask = 0x7FFF'FFFF;
constexpr std::uint32_t kF32Inf = 0x7F80'0000;
constexpr int kF32MantissaBits = 23;
constexpr int kF32Bias = 127;
// CUDA's NaN for bf16 and fp16 alike: sign clear, every exponent and mantissa bit set.
constexpr std::uint16_t kHalfWidthCanonicalNan = 0x7FFF;

// The code an overflowing finite value or an infinity becomes, without its sign.
std::uint32_t overflow_code(const FormatSpec& f, Overflow mode, bool is_inf) {
  const bool saturate = mode == Overflow::kSatFinite || (mode == Overflow::kSatKeepInf && !is_inf);
  if (saturate) return f.max_finite_code();
  // kNoSat, or kSatKeepInf on an infinity: Inf where the format has one, else its NaN.
  if (f.has_inf()) return f.max_exponent_field() << f.mantissa_bits;       // E5M2: 0b0'11111'00
  return (f.max_exponent_field() << f.mantissa_bits) | f.mantissa_mask();  // E4M3: 0b0'1111'111
}

// Rounds |x| (fp32 bits `a`, finite, non-zero exponent range) to the target's code, sign excluded.
// `increment(shift)` returns what to add below the kept bits before truncating by `shift`:
// RNE adds half an ulp minus one plus the kept lsb; stochastic adds random bits.
template <typename Increment>
std::uint32_t round_magnitude(std::uint32_t a, const FormatSpec& f, Increment increment) {
  const int shift = kF32MantissaBits - f.mantissa_bits;  // dropped fp32 mantissa bits (E4M3: 20)
  const int exponent = static_cast<int>(a >> kF32MantissaBits) - kF32Bias;
  if (exponent >= f.min_normal_exponent()) {
    // Normal in the target. Rounding the fp32 pattern in place carries into the exponent field
    // when the mantissa overflows, which is exactly the next binade; then rebias the exponent.
    const std::uint32_t rounded = a + increment(a, shift);
    return (rounded >> shift) - (static_cast<std::uint32_t>(kF32Bias - f.bias) << f.mantissa_bits);
  }
  // Subnormal in the target: significand 1.m (24 bits) shifted right by the extra distance below
  // the target's smallest normal exponent. A result of 1 << mantissa_bits is the smallest normal,
  // which is also its correct encoding. fp32 subnormals (exponent field 0) are far below every
  // target's range and keep no implicit bit.
  const bool f32_subnormal = (a >> kF32MantissaBits) == 0;
  const std::uint32_t significand = (a & 0x7F'FFFF) | (f32_subnormal ? 0u : 0x80'0000u);
  const int total_shift = shift + (f.min_normal_exponent() - exponent);
  if (total_shift >= 32) return 0;  // below half the smallest subnormal for every format here
  const std::uint64_t wide = significand;
  return static_cast<std::uint32_t>((wide + increment(significand, total_shift)) >> total_shift);
}

// `nan_code(sign, a)` gives the code of a NaN input (sign: the target's sign bit or 0; a: |x|'s
// bits): the FP8 casts return CUDA's canonical NaN, the sub-byte ones what SubbyteNan says.
std::uint8_t cast_fp32_to_small(float x, const FormatSpec& f, Overflow mode, auto increment,
                                auto nan_code) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = (bits >> 31) != 0 ? f.sign_mask() : 0u;
  const std::uint32_t a = bits & kF32AbsMask;
  if (a > kF32Inf) return nan_code(sign, a);
  if (a == kF32Inf) return static_cast<std::uint8_t>(sign | overflow_code(f, mode, true));
  const std::uint32_t code = round_magnitude(a, f, increment);
  if (code > f.max_finite_code())
    return static_cast<std::uint8_t>(sign | overflow_code(f, mode, false));
  return static_cast<std::uint8_t>(sign | code);
}

// RNE: add 0b0111..1 plus the lsb that survives, so that exact ties round to the even neighbour.
constexpr auto kNearestEven = [](std::uint32_t kept_source, int shift) -> std::uint32_t {
  return ((1u << (shift - 1)) - 1u) + ((kept_source >> shift) & 1u);
};

std::array<float, 256> build_decode_table(const FormatSpec& f) {
  std::array<float, 256> table{};
  for (std::uint32_t code = 0; code < 256; ++code) {
    if (code >> f.total_bits() != 0) {  // not a code of a sub-byte format
      table[code] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const bool negative = (code & f.sign_mask()) != 0;
    const std::uint32_t magnitude = code & ~f.sign_mask() & 0xFF;
    const std::uint32_t e = magnitude >> f.mantissa_bits;
    const std::uint32_t m = magnitude & f.mantissa_mask();
    float value;
    const bool top = e == f.max_exponent_field();
    if (f.special == Special::kIeee && top) {
      value = m == 0 ? std::numeric_limits<float>::infinity()
                     : std::numeric_limits<float>::quiet_NaN();
    } else if ((f.special == Special::kFnNanOnly && top && m == f.mantissa_mask()) ||
               (f.special == Special::kUnsignedNan && magnitude == 0xFF)) {
      value = std::numeric_limits<float>::quiet_NaN();
    } else if (f.special == Special::kUnsignedNan) {
      value = std::ldexp(1.0f, static_cast<int>(e) - f.bias);
    } else if (e == 0) {  // subnormal: m * 2^(1 - bias - M)
      value = std::ldexp(static_cast<float>(m), f.min_subnormal_exponent());
    } else {  // normal: (2^M + m) * 2^(e - bias - M)
      value = std::ldexp(static_cast<float>((1u << f.mantissa_bits) | m),
                         static_cast<int>(e) - f.bias - f.mantissa_bits);
    }
    table[code] = negative ? -value : value;
  }
  return table;
}

const std::array<float, 256> kE4M3Table = build_decode_table(kE4M3Spec);
const std::array<float, 256> kE5M2Table = build_decode_table(kE5M2Spec);
const std::array<float, 256> kE8M0Table = build_decode_table(kE8M0Spec);
const std::array<float, 256> kE2M1Table = build_decode_table(kE2M1Spec);
const std::array<float, 256> kE2M3Table = build_decode_table(kE2M3Spec);
const std::array<float, 256> kE3M2Table = build_decode_table(kE3M2Spec);

// The decode table of each 8-bit and sub-byte format; nullptr for the wide ones (BF16, FP16, FP32).
const std::array<float, 256>* decode_table(Format format) {
  switch (format) {
    case Format::E4M3: return &kE4M3Table;
    case Format::E5M2: return &kE5M2Table;
    case Format::E8M0: return &kE8M0Table;
    case Format::E2M1: return &kE2M1Table;
    case Format::E2M3: return &kE2M3Table;
    case Format::E3M2: return &kE3M2Table;
    default: return nullptr;
  }
}

// decode_fp8 and decode_subbyte: NaN for a format outside their family.
float decode_in_family(std::uint8_t code, Format format, bool subbyte) {
  const std::array<float, 256>* table = decode_table(format);
  if (table == nullptr || is_subbyte(format) != subbyte) {
    return std::numeric_limits<float>::quiet_NaN();
  }
  return (*table)[code];
}

constexpr auto kFp8Nan = [](std::uint32_t, std::uint32_t) { return kFp8CanonicalNan; };

}  // namespace

constexpr sim::NameTable<Overflow, 3> kOverflowNames{{{Overflow::kSatFinite, "satfinite"},
                                                      {Overflow::kNoSat, "nosat"},
                                                      {Overflow::kSatKeepInf, "sat_keep_inf"}}};
const char* to_string(Overflow mode) { return sim::name_in(kOverflowNames, mode); }

std::uint8_t cast_fp32_to_fp8(float x, Format format, Overflow mode) {
  return cast_fp32_to_small(x, spec(format), mode, kNearestEven, kFp8Nan);
}

std::uint8_t cast_fp32_to_fp8_stochastic(float x, Format format, Overflow mode,
                                         std::uint32_t random_bits) {
  // The random value covers exactly the bits that truncation drops: 0 <= r < 2^shift.
  auto random_below = [random_bits](std::uint32_t, int shift) -> std::uint32_t {
    return shift >= 32 ? random_bits : random_bits & ((1u << shift) - 1u);
  };
  return cast_fp32_to_small(x, spec(format), mode, random_below, kFp8Nan);
}

const std::array<float, 256>* element_decode_table(Format format) {
  return format == Format::E8M0 ? nullptr : decode_table(format);
}

float decode_fp8(std::uint8_t code, Format format) {
  return decode_in_family(code, format, /*subbyte=*/false);
}

constexpr sim::NameTable<SubbyteNan, 5> kSubbyteNanNames{
    {{SubbyteNan::kPositiveMax, "positive_max"},
     {SubbyteNan::kOppositeZero, "opposite_zero"},
     {SubbyteNan::kPositiveZero, "positive_zero"},
     {SubbyteNan::kRoundedBits, "rounded_bits"},
     {SubbyteNan::kRoundedAllOnes, "rounded_all_ones"}}};
const char* to_string(SubbyteNan nan) { return sim::name_in(kSubbyteNanNames, nan); }

std::uint8_t cast_fp32_to_subbyte(float x, Format format, SubbyteSpecials specials) {
  if (!is_subbyte(format)) {
    throw std::invalid_argument(std::string("cast_fp32_to_subbyte: format ") + spec(format).name +
                                " is not a sub-byte format (e2m1, e2m3, e3m2)");
  }
  const FormatSpec& f = spec(format);
  if (!specials.keep_negative_zero && std::bit_cast<std::uint32_t>(x) == 0x8000'0000u) return 0;
  const auto nan_code = [&f, specials](std::uint32_t sign, std::uint32_t a) -> std::uint8_t {
    switch (specials.nan) {
      case SubbyteNan::kPositiveMax: return static_cast<std::uint8_t>(f.max_finite_code());
      case SubbyteNan::kOppositeZero: return static_cast<std::uint8_t>(sign ^ f.sign_mask());
      case SubbyteNan::kPositiveZero: return 0;
      case SubbyteNan::kRoundedBits: break;
      case SubbyteNan::kRoundedAllOnes:  // the NaN torch.clamp leaves: 0xFFFFFFFF
        return static_cast<std::uint8_t>(round_magnitude(0x7FFF'FFFFu, f, kNearestEven) |
                                         f.sign_mask());
    }
    // The exponent field of a NaN (255) is above every target's min normal exponent, so
    // round_magnitude takes its normal branch, exactly the arithmetic torchao applies; its result
    // (E2M1 258..260) keeps its low 8 bits, as torchao's int32 -> uint8 conversion does.
    return static_cast<std::uint8_t>(round_magnitude(a, f, kNearestEven) | sign);
  };
  // No Inf code: overflow_code gives max_finite_code in every Overflow mode for Special::kNone.
  return cast_fp32_to_small(x, f, Overflow::kSatFinite, kNearestEven, nan_code);
}

float decode_subbyte(std::uint8_t code, Format format) {
  return decode_in_family(code, format, /*subbyte=*/true);
}

std::uint8_t encode_e8m0(float x, E8M0Rounding rounding) {
  // The fp32 exponent field is already an E8M0 code (same 8 bits, same bias 127), so the cast is
  // a choice of exponent; see cast.hpp for the rules. CUDA's host code reaches the same result
  // through bf16 (rz, or ru of |x|); here it is computed on the fp32 bits directly and the
  // exhaustive test proves the two equal.
  const std::uint32_t a = std::bit_cast<std::uint32_t>(x) & kF32AbsMask;
  const std::uint32_t e8m0_max = kE8M0Spec.max_finite_code();  // 0xFE = 2^127
  if (a > kF32Inf) return static_cast<std::uint8_t>(kE8M0Spec.max_exponent_field());  // NaN 0xFF
  if (a == kF32Inf) return static_cast<std::uint8_t>(e8m0_max);
  std::uint32_t e = a >> kF32MantissaBits;
  if (rounding == E8M0Rounding::kUp) {
    // |x| above 2^(e - 127) rounds up one binade. For e == 0 (fp32 subnormals) the code 0x00
    // stands for 2^-127 = 0x0040'0000, the subnormal with only mantissa bit 22 set.
    constexpr std::uint32_t kTwoToMinus127 = 0x0040'0000;
    const bool above = e != 0 ? (a & 0x7F'FFFF) != 0 : a > kTwoToMinus127;
    if (above) ++e;
  }
  return static_cast<std::uint8_t>(e < e8m0_max ? e : e8m0_max);
}

float decode_e8m0(std::uint8_t code) { return kE8M0Table[code]; }

std::uint16_t fp32_to_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & kF32AbsMask) > kF32Inf) return kHalfWidthCanonicalNan;
  return static_cast<std::uint16_t>((bits + kNearestEven(bits, 16)) >> 16);
}

float bf16_to_fp32(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t fp32_to_fp16(float x) {
  // The same rounding as the FP8 casts (FP16 is an IEEE format in format.hpp); overflow -> ±Inf.
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = (bits >> 16) & 0x8000;
  const std::uint32_t a = bits & kF32AbsMask;
  if (a > kF32Inf) return kHalfWidthCanonicalNan;
  if (a == kF32Inf) return static_cast<std::uint16_t>(sign | 0x7C00);
  const std::uint32_t code = round_magnitude(a, kFP16Spec, kNearestEven);
  return static_cast<std::uint16_t>(sign | (code > kFP16Spec.max_finite_code() ? 0x7C00 : code));
}

float fp16_to_fp32(std::uint16_t bits) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000) << 16;
  const std::uint32_t e = (bits >> 10) & 0x1F;
  const std::uint32_t m = bits & 0x3FF;
  float magnitude;
  if (e == 0x1F) {
    magnitude = std::bit_cast<float>(0x7F80'0000u | (m << 13));
  } else if (e == 0) {
    magnitude = std::ldexp(static_cast<float>(m), kFP16Spec.min_subnormal_exponent());
  } else {
    magnitude = std::bit_cast<float>(((e + kF32Bias - kFP16Spec.bias) << 23) | (m << 13));
  }
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | sign);
}

}  // namespace fp8lab::sim
