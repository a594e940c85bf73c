// MXFP8 (docs/numerics.md §2.5; te-accelerate.md §4; torchao-mx.md §4): blocks of 32 consecutive
// elements along the GEMM's K share one E8M0 scale 2^(e - 127). The rowwise (1 x 32) and
// columnwise (32 x 1) copies are each quantized from the high-precision input, never from each
// other; TE's optional 2-D mode gives weights one scale per 32 x 32 tile, shared by both copies.
//
// Scale modes (how the E8M0 code e of a block comes from its amax):
//   kTe     TE (default): e = te_float_to_e8m0(RN(amax * RCP)), RCP = (float)(1.0 / fp8_max);
//           amax ignores NaN (fmaxf).                                    te-accelerate.md §4.3
//   kFloor  OCP MX v1.0 / torchao default: e = clamp(E(amax) - emax, -127, 128) + 127
//   kCeil   torchao: as floor, plus 1 when amax's mantissa is non-zero
//   kEven   torchao: amax rounded at mantissa bit (23 - mbits - 1) first, then as floor
//   kRceil  torchao (cuBLAS style), per torchao version (below)
// where E(a) = fp32 exponent field of a minus 127 (-127 for zero and subnormals), emax = the
// element format's largest exponent (8 for E4M3, 15 for E5M2, 2 for E2M1 and E2M3, 4 for E3M2:
// torchao's target_max_pow2) and mbits its mantissa bits. The torchao modes propagate NaN into
// amax (torch.amax).
//
// MXFP4 (E2M1) and MXFP6 (E2M3, E3M2) are these same rules with the element format's emax, mbits
// and max (fp4-formats.md §2: torchao's to_mx takes them from the element dtype alone), and the
// element cast of sim/cast.hpp with the converter's specials (mx_subbyte_specials): torchao's
// _f32_to_floatx_unpacked (kSubbyteTorchao) for its modes, cvt.rn.satfinite (kSubbyteCuda) for kTe.
// torchao 0.18 clamps to ±max_pos before its FP8 cast and its rceil cast only; the sub-byte casts
// saturate, so the clamp changes no code. TE has no MXFP4/MXFP6 quantizer (its
// quantize_transpose_vector_blockwise_fp4.cu refuses pow2 scales): kTe on a sub-byte element is
// TE's MXFP8 rule with the element's max, what a TE-style kernel would compute, not a TE output.
//
// The torchao modes follow one of two torchao versions (TorchaoVersion), because torchao's
// `to_mx` (torchao/prototype/mx_formats/mx_tensor.py) changed after v0.18.0 (PR #4725):
//   kV0_18 (torchao-mx.md §4.3; the released to_mx users install, the default):
//     floor/ceil/even: e as above, but only a NaN amax gives 255 (an Inf amax has exponent field
//       255, so e = clamp(128 - emax) + 127: 247 for E4M3, 240 for E5M2; `even` rounding a finite
//       amax up to Inf likewise). Elements: x / max(bitcast<float>(e << 23), 2^-126), clamped to
//       +-fp8_max, RNE: the F32_MIN_NORMAL clamp quantizes a block stored with e = 0 (2^-127) as
//       if its scale were 2^-126 (dequantization is then off by 2x), and e = 255 divides by +Inf
//       (finite elements -> +-0, NaN and Inf -> NaN).
//     rceil: d = amax / fp8_max (fp32 division); e = 255 for NaN, 254 for Inf, else
//       clamp(ceil(torch_log2_f32(d)), -127, 127) + 127 (fp32 log2: just above a power of two
//       it returns the power itself, so e can be one below main's); multiplier r = 1.0 for e = 0
//       (TE's exp2f_rcp), NaN for 255, else 2^(127 - e); q = RNE(clamp(x * r, +-fp8_max)).
//   kMain (torchao-mx.md §4.2; torchao main after 5d73a0c10):
//     floor/ceil/even: a NaN or infinite amax (or `even` rounding to Inf) gives 255.
//     rceil: e = rceil_float_to_e8m0(RN(amax * RCP)), NaN/Inf -> 255.
//     Elements: q = cast_satfinite(RN(x * mult(e))), mult as for kTe below.
// kTe ignores the version.
//
// Elements, kTe and kMain: q = cast_satfinite(RN(x * mult(e))), mult(e) = 2^(127 - e) as fp32:
//   e = 0..253 -> bits (254 - e) << 23;  e = 254 -> 2^-127 (0x00400000);  e = 255 -> NaN
// (TE tests/cpp/test_common.h exp2f_rcp; torchao's E8M0 decode of (254 - e) mod 256).
// kV0_18's division is also one multiplier per block, mx_block_multiplier: every scale it
// divides by is 2^k, k in [-126, 127], or +Inf, whose reciprocal 2^-k (or 0) is an exact fp32,
// and IEEE x / s and x * (1/s) are both the correctly rounded x * 2^-k (x / Inf and x * 0 give
// the same signed zero, Inf / Inf and Inf * 0 both NaN). So one block walk (blocked.hpp)
// serves both versions; tests/sim/scaling_mx_versions_test.cpp checks the identity bit by bit.
// The tensor's scale_inv is 2^(e - 127) (decode_e8m0; torchao get_fp_scale in both versions),
// scale_e8m0 is e, scale is the block's multiplier.
#pragma once

#include <cstdint>
#include <span>

#include "sim/cast.hpp"
#include "sim/format.hpp"
#include "sim/scaling/common.hpp"
#include "sim/scaling/subbyte_specials.hpp"
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

// kMxBlockSize, E8M0Mode and TorchaoVersion (named as in recipes: "torchao-0.18",
// "torchao-main") are described in sim/settings.hpp.

// (float)(1.0 / fp8_max): E4M3 0x3B124925, E5M2 0x37924925 (te-accelerate.md §4.3; TE
// Quantized_Limits::max_reciprocal, torchao's fp32 constant): the RCP of kTe and main's kRceil.
float mx_reciprocal_of_max(Format element);

// TE float_to_e8m0 (util/ptx.cuh fallback, tests/cpp/test_common.h): round up, satfinite.
//   NaN -> 0xFF;  ±Inf -> 0xFE;  0 -> 0x00;  else with E = bits[30:23], M = bits[22:0]:
//   E + 1 if (M > 0 && E != 0xFE && !(E == 0 && M <= 0x400000)), else E.
// Input is non-negative in use (an amax product); a negative input's sign bit lands in E.
std::uint8_t te_float_to_e8m0(float v);

// PTX cvt.rp.ue8m0x2.f32 without satfinite (torchao _f32_to_e8m0_rceil), for finite v >= 0:
//   E + (E == 0 ? M > 0x400000 : M != 0), so values <= 2^-127 give 0 and values above 2^127
//   give 255 (NaN). Non-finite v gives 255.
std::uint8_t rceil_float_to_e8m0(float v);

// The E8M0 code of a block with this amax (see the mode table above; `amax` must already follow
// the mode's NaN rule: NaN-ignoring for kTe, NaN-propagating for the others).
std::uint8_t mx_scale_code(float amax, Format element, E8M0Mode mode,
                           TorchaoVersion torchao = TorchaoVersion::kV0_18);

// The sub-byte cast's NaN and -0 codes under an E8M0 mode: mx_subbyte_specials
// (sim/scaling/subbyte_specials.hpp, shared with gpu/).

// 2^(127 - e) as fp32: the multiplier kTe and kMain apply to elements before the cast.
float mx_element_multiplier(std::uint8_t e);

// The multiplier a block with code e is quantized with, per mode and version (table above):
// mx_element_multiplier(e) for kTe and kMain; for kV0_18 floor/ceil/even 1 / max(2^(e - 127),
// 2^-126), i.e. 2^126 for e = 0 and 0 for e = 255; for kV0_18 rceil 1.0 for e = 0.
float mx_block_multiplier(std::uint8_t e, E8M0Mode mode, TorchaoVersion torchao);

// One MX copy: 1 x 32 blocks (kRowwise, along the columns) or 32 x 1 (kColumnwise, along the
// rows). Partial edge blocks use their valid elements only (TE and torchao require multiples of
// 32; we also accept other shapes).
QuantizeResult quantize_mx(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                           ScaleAxis axis, Format format, E8M0Mode mode = E8M0Mode::kTe,
                           TorchaoVersion torchao = TorchaoVersion::kV0_18);

// TE enable_2d_quantization for weights: one E8M0 per 32 x 32 tile; the rowwise and columnwise
// copies are this same tensor.
QuantizeResult quantize_mx_2d(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                              Format format, E8M0Mode mode = E8M0Mode::kTe,
                              TorchaoVersion torchao = TorchaoVersion::kV0_18);

struct MxCopies {
  QuantizeResult rowwise;     // 1 x 32 blocks
  QuantizeResult columnwise;  // 32 x 1 blocks
};
// Both copies, each from the high-precision x.
MxCopies quantize_mx_copies(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                            Format format, E8M0Mode mode = E8M0Mode::kTe,
                            TorchaoVersion torchao = TorchaoVersion::kV0_18);

// The MX copy one GEMM reads (te-accelerate.md §4.2 table; torchao-mx.md §4.4): blocks along
// the GEMM's K, i.e. quantize_mx along scale_axis(gemm, operand). With `weight_2d` (TE
// enable_2d_quantization) the weight uses 32 x 32 tiles in every GEMM.
QuantizeResult quantize_mx_operand(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                   Gemm gemm, Operand operand, Format format,
                                   E8M0Mode mode = E8M0Mode::kTe,
                                   TorchaoVersion torchao = TorchaoVersion::kV0_18,
                                   bool weight_2d = false);

}  // namespace fp8lab::sim::scaling
