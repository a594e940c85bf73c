// Scalar casts between fp32 and the narrow formats of sim/format.hpp (docs/numerics.md §1).
//
// Every cast names the hardware semantics it copies: rounding is always IEEE round-to-nearest-even
// (CUDA `cvt.rn`), except the stochastic cast, and the overflow mode is an explicit argument that
// is always honoured. The bulk paths in sim/quantize.hpp must give the same bits as these.
#pragma once

#include <cstdint>

#include "sim/format.hpp"

namespace fp8lab::sim {

// What happens to values beyond the format's largest finite magnitude (docs/numerics.md §1).
enum class Overflow : std::uint8_t {
  kSatFinite,   // CUDA __NV_SATFINITE / cvt.rn.satfinite, TE, torchao: overflow and ±Inf -> ±max
  kNoSat,       // CUDA __NV_NOSAT, torch .to(float8_*): E4M3 -> NaN, E5M2 -> ±Inf
  kSatKeepInf,  // ml_dtypes saturating: finite overflow -> ±max, ±Inf -> ±Inf (E5M2) / NaN (E4M3)
};
// Every mode, for the checks that sweep them all.
inline constexpr Overflow kOverflowModes[] = {Overflow::kSatFinite, Overflow::kNoSat,
                                              Overflow::kSatKeepInf};

const char* to_string(Overflow mode);

// The NaN code a cast produces from a NaN input. CUDA canonicalizes every NaN input to the positive
// quiet NaN 0x7F for both E4M3 (s.1111.111) and E5M2 (s.11111.11); we do the same.
inline constexpr std::uint8_t kFp8CanonicalNan = 0x7F;

// fp32 -> E4M3 / E5M2 with round-to-nearest-even and the given overflow mode.
std::uint8_t cast_fp32_to_fp8(float x, Format format, Overflow mode);

// fp32 -> E4M3 / E5M2 with stochastic rounding: add the low (23 - mantissa bits, more for target
// subnormals) bits of `random_bits` below the kept mantissa of |x|, then truncate. Rounds up with
// probability equal to the discarded fraction, so E[decode(q)] = x for in-range x, with one
// exception: when 32 or more bits would be dropped (|x| < 2^(emin_subnormal - 8), E4M3 2^-17,
// E5M2 2^-24) the result is ±0, a bias below 2^-8 of the smallest subnormal.
std::uint8_t cast_fp32_to_fp8_stochastic(float x, Format format, Overflow mode,
                                         std::uint32_t random_bits);

// Exact value of an 8-bit code (E4M3, E5M2, E8M0), from a 256-entry table built from FormatSpec.
float decode_fp8(std::uint8_t code, Format format);

// --- Sub-byte element formats: E2M1 (FP4), E2M3 and E3M2 (FP6), OCP MX v1.0 ------------------------
// None has an Inf or a NaN code. Every peer rounds finite inputs to nearest even and saturates to
// ±max (E2M1 6, E2M3 7.5, E3M2 28), and sends ±Inf to ±max; they differ on a NaN input and on an
// exact -0.0. Which peer does what (upstream sources in reference/fp4-formats.md §1, docs/fp4.md):
enum class SubbyteNan : std::uint8_t {
  kPositiveMax,  // +max, sign dropped: CUDA cvt.rn.satfinite.{e2m1x2,e2m3x2,e3m2x2}.f32 and its host
                 // emulation __nv_cvt_float_to_fp4/_fp6 (cuda_fp4.hpp, cuda_fp6.hpp); TE's kernels
  kOppositeZero,  // ml_dtypes: the type's quiet_NaN() is the -0 code (sign bit only) and a NaN with
                  // the sign bit set gets it negated: +NaN -> -0 (E2M1 0x8), -NaN -> +0 (0x0)
  kPositiveZero,  // TE's Python reference cast_to_fp4x2 (reference_nvfp4.py): no comparison of its
                  // table holds for NaN, so the code stays 0x0
  kRoundedBits,   // torchao 0.18 _f32_to_floatx_unpacked (custom_fp_utils.py; _f32_to_fpx_unpacked
                  // on main, same body): the NaN's bits take the normal-number path (add
                  // the RNE increment, shift, rebias), truncated to 8 bits, sign kept: canonical
                  // NaN 0x7FC00000 -> the code of 1.5 (E2M1 0x3, E2M3 0x0C, E3M2 0x0E)
  kRoundedAllOnes,  // every NaN as the all-ones pattern 0xFFFFFFFF, which kRoundedBits maps to
                    // E2M1 0xC, E2M3 0x30, E3M2 0x30 (-0 code | rounded bits): what torchao gives
                    // where that pattern reaches the cast (NVFP4's full-reduction amax makes it).
                    // Not a clamp's doing: torch 2.15's clamp keeps a NaN's bits under every ATen
                    // capability (docs/fp4.md, "Where a NaN's bytes go"); the torchao modes now
                    // follow each NaN's bits (sim/scaling/nvfp4.cpp) and use kRoundedBits
};

// How a cast to a sub-byte format treats the inputs the format cannot hold. A described option:
// one cast (cast_fp32_to_subbyte) reads both fields, no peer has a code path of its own.
struct SubbyteSpecials {
  SubbyteNan nan;
  // An exact -0.0 input -> the -0 code (sign bit only). false: -> +0, as TE's reference table does
  // (-0.0 < -0.0 is false, so it lands on code 0). Negative values that underflow keep the sign in
  // every peer, that table included.
  bool keep_negative_zero;
};

// The peers' modes, by the names the CLI and recipe files will use.
inline constexpr SubbyteSpecials kSubbyteCuda = {SubbyteNan::kPositiveMax, true};
inline constexpr SubbyteSpecials kSubbyteMlDtypes = {SubbyteNan::kOppositeZero, true};
inline constexpr SubbyteSpecials kSubbyteTorchao = {SubbyteNan::kRoundedBits, true};
inline constexpr SubbyteSpecials kSubbyteTeReference = {SubbyteNan::kPositiveZero, false};
inline constexpr SubbyteSpecials kSubbyteTorchaoClamped = {SubbyteNan::kRoundedAllOnes, true};

// The same modes by name (CLI, recipe files, tests/sim/subbyte_codes.cpp). "te_reference" is TE's
// Python reference; TE's kernels convert with cvt.rn.satfinite, i.e. "cuda".
struct NamedSubbyteSpecials {
  const char* name;
  SubbyteSpecials specials;
};
inline constexpr NamedSubbyteSpecials kSubbyteModes[] = {
    {"cuda", kSubbyteCuda},
    {"ml_dtypes", kSubbyteMlDtypes},
    {"torchao", kSubbyteTorchao},
    {"te_reference", kSubbyteTeReference},
    {"torchao_clamped", kSubbyteTorchaoClamped}};

const char* to_string(SubbyteNan nan);

// fp32 -> E2M1 / E2M3 / E3M2 code (low 4 or 6 bits of the byte, sign in the top one of them),
// round-to-nearest-even, saturating, with `specials` for NaN and -0.0. The same rounding as
// cast_fp32_to_fp8 (one generic cast over FormatSpec). std::invalid_argument for other formats.
std::uint8_t cast_fp32_to_subbyte(float x, Format format, SubbyteSpecials specials);

// Exact value of an E2M1 / E2M3 / E3M2 code, from a table built from FormatSpec like decode_fp8's.
// A byte with bits above the format's width set is not a code of it: NaN (no code decodes to NaN).
float decode_subbyte(std::uint8_t code, Format format);

// The value of a code of any element format: decode_subbyte for E2M1 / E2M3 / E3M2, else
// decode_fp8.
inline float decode_element(std::uint8_t code, Format format) {
  return is_subbyte(format) ? decode_subbyte(code, format) : decode_fp8(code, format);
}

// E8M0 (UE8M0) encode of a scale, CUDA __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, rounding)
// semantics (cuda_fp8.hpp host path): kUp = cudaRoundPosInf, kDown = cudaRoundZero. E8M0 has no
// sign, so both work on |x| (a negative x encodes like -x). With e = the fp32 exponent field of x:
//   NaN                          -> 0xFF (the only NaN code)
//   ±Inf                         -> 0xFE (2^127, satfinite)
//   kDown: finite x              -> min(e, 0xFE): 2^floor(log2|x|); |x| < 2^-126 (zero and fp32
//                                   subnormals) -> 0x00 = 2^-127
//   kUp:   finite x              -> 2^ceil(log2|x|) clamped to [2^-127, 2^127]: e + 1 when the
//                                   mantissa is non-zero, else e; |x| <= 2^-127 (zero included)
//                                   -> 0x00, 2^-127 < |x| < 2^-126 -> 0x01; overflow -> 0xFE
// Proven equal to cuda_fp8.h on all 2^32 inputs, both roundings (tests/sim/cast_e8m0_oracle_test).
enum class E8M0Rounding : std::uint8_t { kUp, kDown };
std::uint8_t encode_e8m0(float x, E8M0Rounding rounding);
// 2^(code - 127) for code 0..254; NaN for 0xFF. Code 0 is 2^-127, an fp32 subnormal.
float decode_e8m0(std::uint8_t code);

// IEEE half-width formats, round-to-nearest-even (overflow -> ±Inf). Every NaN becomes the
// canonical 0x7FFF, as CUDA's __float2bfloat16 / __float2half and the device's cvt.rn.bf16.f32 /
// cvt.rn.f16.f32 do, so that gpu/ gets the same bits (tests/sim/cast_half_oracle_test.cpp).
std::uint16_t fp32_to_bf16(float x);
float bf16_to_fp32(std::uint16_t bits);
std::uint16_t fp32_to_fp16(float x);
float fp16_to_fp32(std::uint16_t bits);

}  // namespace fp8lab::sim
