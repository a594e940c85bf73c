// MXFP8 (NUMERICS.md §2.5; te-accelerate.md §4; torchao-mx.md §4): blocks of 32 consecutive
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
//   kRceil  torchao (cuBLAS style): rceil_float_to_e8m0(RN(amax * RCP)), NaN/Inf -> 255
// where E(a) = fp32 exponent field of a minus 127 (-127 for zero and subnormals), emax = the
// element format's largest exponent (8 for E4M3, 15 for E5M2) and mbits its mantissa bits. The
// torchao modes follow torchao HEAD (torchao-mx.md §4.2): amax propagates NaN, and a NaN or
// infinite amax gives 255 (NaN) for floor/ceil/even.
//
// Elements, every mode: q = cast_satfinite(RN(x * mult(e))), mult(e) = 2^(127 - e) as fp32:
//   e = 0..253 -> bits (254 - e) << 23;  e = 254 -> 2^-127 (0x00400000);  e = 255 -> NaN
// (TE tests/cpp/test_common.h exp2f_rcp; torchao's E8M0 decode of (254 - e) mod 256).
// The tensor's scale_inv is 2^(e - 127) (decode_e8m0), scale_e8m0 is e, scale is mult(e).
#pragma once

#include <cstdint>
#include <span>

#include "sim/format.hpp"
#include "sim/scaling/common.hpp"
#include "sim/scaling/gemm_axes.hpp"

namespace fp8lab::sim::scaling {

inline constexpr std::int64_t kMxBlockSize = 32;

enum class E8M0Mode : std::uint8_t { kTe, kFloor, kCeil, kEven, kRceil };
const char* to_string(E8M0Mode mode);

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
std::uint8_t mx_scale_code(float amax, Format element, E8M0Mode mode);

// 2^(127 - e) as fp32: the multiplier applied to elements before the cast (table above).
float mx_element_multiplier(std::uint8_t e);

// One MX copy: 1 x 32 blocks (kRowwise, along the columns) or 32 x 1 (kColumnwise, along the
// rows). Partial edge blocks use their valid elements only (TE and torchao require multiples of
// 32; we also accept other shapes).
QuantizeResult quantize_mx(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                           ScaleAxis axis, Format format, E8M0Mode mode = E8M0Mode::kTe);

// TE enable_2d_quantization for weights: one E8M0 per 32 x 32 tile; the rowwise and columnwise
// copies are this same tensor.
QuantizeResult quantize_mx_2d(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                              Format format, E8M0Mode mode = E8M0Mode::kTe);

struct MxCopies {
  QuantizeResult rowwise;     // 1 x 32 blocks
  QuantizeResult columnwise;  // 32 x 1 blocks
};
// Both copies, each from the high-precision x.
MxCopies quantize_mx_copies(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                            Format format, E8M0Mode mode = E8M0Mode::kTe);

// The MX copy one GEMM reads (te-accelerate.md §4.2 table; torchao-mx.md §4.4): blocks along
// the GEMM's K, i.e. quantize_mx along scale_axis(gemm, operand). With `weight_2d` (TE
// enable_2d_quantization) the weight uses 32 x 32 tiles in every GEMM.
QuantizeResult quantize_mx_operand(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                   Gemm gemm, Operand operand, Format format,
                                   E8M0Mode mode = E8M0Mode::kTe, bool weight_2d = false);

}  // namespace fp8lab::sim::scaling
