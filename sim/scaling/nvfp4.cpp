#include "sim/scaling/nvfp4.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cast.hpp"
#include "sim/fp4_stochastic.hpp"
#include "sim/scaling/blocked.hpp"
#include "sim/scaling/subbyte_specials.hpp"

namespace fp8lab::sim::scaling {
namespace {

constexpr float kFltMax = std::numeric_limits<float>::max();
constexpr float kE2M1Max = static_cast<float>(kE2M1Spec.max_finite());  // 6
constexpr float kE4M3Max = static_cast<float>(kE4M3Spec.max_finite());  // 448
// 448 * 6, exact in fp32: TE's fp8_max * fp4_max (a constant expression), torchao's
// F8E4M3_MAX * F4_E2M1_MAX (a Python float).
constexpr float kE4M3TimesE2M1Max = kE4M3Max * kE2M1Max;
// TE's fp4_max_inv = 1.0f / 6.0f: fp32(1/6), rounded before it multiplies S_enc.
constexpr float kInverseE2M1Max = 1.0f / kE2M1Max;
// torchao's E4M3_EPS = torch.finfo(float8_e4m3fn).tiny: the smallest normal E4M3, 2^-6.
constexpr float kE4M3Tiny = 0.015625f;
static_assert(kE4M3TimesE2M1Max == 2688.0f);

// torchao's NaNs, bit for bit, as torch 2.15 computes them on an x86 CPU (docs/fp4.md, "Where a
// NaN's bytes go"). torch.clamp(x, lo, hi) with scalar bounds keeps a NaN's bits under every ATen
// capability: clamp_scalar_kernel_impl (aten/src/ATen/native/cpu/TensorCompareKernel.cpp) runs
// std::min(std::max(a, lo), hi) on the scalar path and vec::clamp on the vector one, which is
// min(max_v, max(min_v, a)) in x86 min/max for AVX2 and AVX-512 (vec256_float.h, vec512_float.h:
// they return the second operand when one is NaN, here a) and the same std::min/std::max
// for the DEFAULT capability (vec_base.h); std::max(NaN, lo) and std::min(NaN, hi) return the NaN.
float torch_clamp(float v, float lo, float hi) {
  if (std::isnan(v)) return v;
  return v < lo ? lo : (v > hi ? hi : v);
}

constexpr std::uint32_t kQuietBit = 0x0040'0000u;
constexpr std::uint32_t kX86DefaultNan = 0xFFC0'0000u;  // an invalid operation's result on x86
float quiet(float v) { return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | kQuietBit); }

// a / b on x86 (divss/divps): the first NaN operand, quieted, else the quotient, whose NaN (0/0,
// Inf/Inf) is the default NaN.
float torch_div(float a, float b) {
  if (std::isnan(a)) return quiet(a);
  if (std::isnan(b)) return quiet(b);
  const float q = a / b;
  return std::isnan(q) ? std::bit_cast<float>(kX86DefaultNan) : q;
}

// data_hp * reciprocal_scale in nvfp4_quantize: measured with torch 2.15 on an Intel Xeon, a NaN
// reciprocal wins over a NaN element (0x7FC00000 * 0xFFFFFFFF gives 0xFFFFFFFF), else the NaN
// operand, else the product (0 * Inf: the default NaN).
float torch_mul_scale(float x, float reciprocal) {
  if (std::isnan(reciprocal)) return quiet(reciprocal);
  if (std::isnan(x)) return quiet(x);
  const float p = x * reciprocal;
  return std::isnan(p) ? std::bit_cast<float>(kX86DefaultNan) : p;
}

// c10's float8_e4m3fn -> float (fp8e4m3fn_to_fp32_value) for the NaN codes: 0x7F -> 0x7FF00000,
// 0xFF -> 0xFFF00000 (its bit arithmetic; any other code decodes exactly).
float torch_decode_e4m3(std::uint8_t code) {
  if ((code & 0x7Fu) == 0x7Fu)
    return std::bit_cast<float>(code & 0x80u ? 0xFFF0'0000u : 0x7FF0'0000u);
  return decode_fp8(code, Format::E4M3);
}

// torch's fp32 -> float8_e4m3fn for what torch_clamp leaves: RNE in range, NaN keeps its sign.
std::uint8_t torch_e4m3(float v) {
  if (std::isnan(v)) return std::signbit(v) ? 0xFF : 0x7F;
  return cast_fp32_to_fp8(v, Format::E4M3, Overflow::kSatFinite);
}

bool is_nvfp4_block(BlockShape b) {
  return b == BlockShape{1, kNvfp4BlockSize} || b == BlockShape{kNvfp4BlockSize, 1} ||
         b == BlockShape{kNvfp4BlockSize, kNvfp4BlockSize};
}

// Replaces the RN codes of `result` (made from x) by stochastically rounded ones under the same
// block multipliers (QuantizedTensor::scale), and recounts the underflows. Row by row: y = x * s
// (the products the scalar rule takes), then e2m1_stochastic_codes (Highway lanes, the scalar
// rule's bits) from the row's first element index.
void round_stochastically(std::span<const float> x, const StochasticStream& stream,
                          QuantizeResult& result) {
  QuantizedTensor& t = result.tensor;
  const std::int64_t scale_cols = t.scale_cols();
  const auto cols = static_cast<std::size_t>(t.cols);
  std::vector<float> y(cols);
  std::size_t underflowed = 0;
  for (std::int64_t r = 0; r < t.rows; ++r) {
    const float* scale_row = t.scale.data() + (r / t.block_rows) * scale_cols;
    const std::size_t first = static_cast<std::size_t>(r) * cols;
    const float* xr = x.data() + first;
    const auto block_cols = static_cast<std::size_t>(t.block_cols);
    if (block_cols == 1) {
      for (std::size_t c = 0; c < cols; ++c) y[c] = xr[c] * scale_row[c];
    }
    for (std::size_t c0 = 0, b = 0; block_cols > 1 && c0 < cols; c0 += block_cols, ++b) {
      const std::size_t c1 = std::min(cols, c0 + block_cols);
      const float s = scale_row[b];
      for (std::size_t c = c0; c < c1; ++c) y[c] = xr[c] * s;
    }
    const auto codes = std::span<std::uint8_t>(t.data).subspan(first, cols);
    e2m1_stochastic_codes(y, stream.seed, stream.stream, first, codes);
    std::size_t row_underflowed = 0;  // x != 0, y not NaN, a ±0 code (as a sum, for the vectorizer)
    for (std::size_t c = 0; c < cols; ++c) {
      row_underflowed +=
          static_cast<std::size_t>((xr[c] != 0.0f) & (y[c] == y[c]) & ((codes[c] & 0x7u) == 0));
    }
    underflowed += row_underflowed;
  }
  result.stats.underflowed = underflowed;
}

// nvfp4_quantize's elements whose product with the block's reciprocal scale is NaN: the NaN torch
// gives (torch_mul_scale) keeps its bits through torch.clamp and _f32_to_floatx_unpacked casts
// those bits (kSubbyteTorchao). Other elements are the walk's.
void recast_nan_products(std::span<const float> x, QuantizeResult& result) {
  QuantizedTensor& t = result.tensor;
  const std::int64_t scale_cols = t.scale_cols();
  for (std::int64_t r = 0; r < t.rows; ++r) {
    const float* scale_row = t.scale.data() + (r / t.block_rows) * scale_cols;
    for (std::int64_t c = 0; c < t.cols; ++c) {
      const auto i = static_cast<std::size_t>(r * t.cols + c);
      const float y = torch_mul_scale(x[i], scale_row[c / t.block_cols]);
      if (std::isnan(y)) t.data[i] = cast_fp32_to_subbyte(y, Format::E2M1, kSubbyteTorchao);
    }
  }
}

}  // namespace

Nvfp4Global nvfp4_global_scale(float amax, Nvfp4Mode mode) {
  Nvfp4Global g;
  g.amax = amax;
  // torchao's training kernels (_nvfp4_quantize, _nvfp4_2d_quantize) spell TE's rule: 1 at amax 0,
  // min(2688 / amax, FLT_MAX) else, 1 where that is 0; decode = 1 / encode.
  if (mode == Nvfp4Mode::kTe || mode == Nvfp4Mode::kTorchaoTraining) {
    g.encode = std::fmin(kE4M3TimesE2M1Max / amax, kFltMax);
    if (amax == 0.0f || g.encode == 0.0f) g.encode = 1.0f;
    g.decode = 1.0f / g.encode;
  } else {
    g.decode = torch_div(amax, kE4M3TimesE2M1Max);  // per_tensor_amax_to_scale
    g.encode = torch_div(1.0f, g.decode);
  }
  return g;
}

std::uint8_t nvfp4_block_scale(float block_amax, const Nvfp4Global& global, Nvfp4Mode mode) {
  if (mode == Nvfp4Mode::kTe) {
    // cvt.rn.satfinite.e4m3: >= 448 and Inf -> 0x7E, NaN -> 0x7F, no lower clamp.
    return cast_fp32_to_fp8(block_amax * (global.encode * kInverseE2M1Max), Format::E4M3,
                            Overflow::kSatFinite);
  }
  if (mode == Nvfp4Mode::kTorchaoTraining) {
    // pvscale = (vec_max / 6) * global_encode_scale; tl.clamp(pvscale, E4M3 tiny, 448); then
    // .to(tl.float8e4nv), RN. Other order than TE's (amax_b / 6 first) and floored at 2^-6.
    const float scaled = (block_amax / kE2M1Max) * global.encode;
    return cast_fp32_to_fp8(std::fmin(std::fmax(scaled, kE4M3Tiny), kE4M3Max), Format::E4M3,
                            Overflow::kSatFinite);
  }
  const float scaled = torch_div(torch_div(block_amax, kE2M1Max), global.decode);
  return torch_e4m3(torch_clamp(scaled, kE4M3Tiny, kE4M3Max));
}

float nvfp4_block_multiplier(std::uint8_t scale_e4m3, const Nvfp4Global& global, Nvfp4Mode mode) {
  const float s = decode_fp8(scale_e4m3, Format::E4M3);
  if (mode != Nvfp4Mode::kTorchao) return std::fmin(1.0f / (s * global.decode), kFltMax);
  // (1.0 / per_tensor_scale) / scaled_block_scales_fp32
  return torch_div(global.encode, torch_decode_e4m3(scale_e4m3));
}

namespace {

// quantize_nvfp4 with the per-tensor scale `fixed` instead of the one from x's amax, when given.
QuantizeResult quantize_nvfp4_global(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                     BlockShape block, Nvfp4Mode mode,
                                     const StochasticStream* stochastic, const float* fixed) {
  if (!is_nvfp4_block(block)) {
    throw std::invalid_argument("quantize_nvfp4: block = " + std::to_string(block.rows) + " x " +
                                std::to_string(block.cols) + "; accepted: 1 x 16, 16 x 1, 16 x 16");
  }
  check_tensor_arguments("quantize_nvfp4", x.size(), rows, cols, Format::E2M1, true);
  const bool te = mode == Nvfp4Mode::kTe;
  if (stochastic != nullptr && mode == Nvfp4Mode::kTorchao) {
    throw std::invalid_argument(
        "quantize_nvfp4: stochastic rounding is modelled for mode te (TE's NVFP4BlockScaling) "
        "and mode torchao_training (torchao's NVFP4TrainingConfig); torchao's nvfp4_quantize "
        "rounds to nearest");
  }
  // torchao's training kernels take bf16 operands (nvfp4_mm_triton casts input and weight with
  // .to(torch.bfloat16); gradients arrive in bf16): x is rounded RN to bf16 first.
  std::vector<float> rounded;
  if (mode == Nvfp4Mode::kTorchaoTraining) {
    rounded.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) rounded[i] = bf16_to_fp32(fp32_to_bf16(x[i]));
    x = rounded;
  }
  float tensor_amax = te ? amax(x) : amax_nan_propagating(x);
  // torch.max(torch.abs(x)), the full reduction, gives 0xFFFFFFFF for a tensor holding a NaN
  // (measured, torch 2.15 on an x86 CPU); the per-block torch.amax(dim=-1) gives 0x7FC00000.
  if (mode == Nvfp4Mode::kTorchao && std::isnan(tensor_amax)) {
    tensor_amax = std::bit_cast<float>(0xFFFF'FFFFu);
  }
  const Nvfp4Global global = fixed == nullptr ? nvfp4_global_scale(tensor_amax, mode)
                                              : Nvfp4Global{tensor_amax, *fixed, *fixed};
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  // A block's multiplier and decode scale depend on its scale byte alone (given `global`): each is
  // worked out at the first block with that byte, not at every block (they were a fifth of the
  // quantizer's time). The walk calls the rule from one thread.
  struct PerByte {
    float multiplier[256], scale_inv[256];
    bool known[256] = {};
  } per_byte;
  // The walk stores one byte per block in its E8M0 slot; here that byte is the E4M3 scale.
  QuantizeResult result = quantize_blocked(
      "quantize_nvfp4", x, rows, cols, block, Format::E2M1, /*store_e8m0=*/true,
      [&global, &per_byte, mode, te](std::span<const float> block_amax,
                                     std::span<const std::uint8_t> has_nan,
                                     BlockScaleRow out) {  // a band at a time: no call per block
        for (std::size_t j = 0; j < block_amax.size(); ++j) {
          const std::uint8_t s =
              nvfp4_block_scale(has_nan[j] != 0 && !te ? kNaN : block_amax[j], global, mode);
          if (!per_byte.known[s]) {
            per_byte.multiplier[s] = nvfp4_block_multiplier(s, global, mode);
            per_byte.scale_inv[s] = decode_fp8(s, Format::E4M3) * global.decode;
            per_byte.known[s] = true;
          }
          out.scale[j] = per_byte.multiplier[s];
          out.scale_inv[j] = per_byte.scale_inv[s];
          out.e8m0[j] = s;
        }
      },
      nvfp4_subbyte_specials(mode));
  QuantizedTensor& t = result.tensor;
  t.scale_e4m3 = std::move(t.scale_e8m0);
  t.scale_e8m0.clear();
  t.global_scale = {global.amax, global.encode, global.decode};
  if (stochastic != nullptr) round_stochastically(x, *stochastic, result);
  if (mode == Nvfp4Mode::kTorchao) recast_nan_products(x, result);
  return result;
}

}  // namespace

QuantizeResult quantize_nvfp4(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                              BlockShape block, Nvfp4Mode mode,
                              const StochasticStream* stochastic) {
  return quantize_nvfp4_global(x, rows, cols, block, mode, stochastic, nullptr);
}

QuantizeResult quantize_nvfp4_single_level(std::span<const float> x, std::int64_t rows,
                                           std::int64_t cols, BlockShape block) {
  const float one = 1.0f;
  return quantize_nvfp4_global(x, rows, cols, block, Nvfp4Mode::kTorchao, nullptr, &one);
}

BlockShape nvfp4_block_shape(Gemm gemm, Operand operand, bool weight_2d) {
  const ScaleAxis axis = scale_axis(gemm, operand);  // throws for an operand the GEMM lacks
  if (weight_2d && operand == Operand::kWeight) return {kNvfp4BlockSize, kNvfp4BlockSize};
  return axis == ScaleAxis::kRowwise ? BlockShape{1, kNvfp4BlockSize}
                                     : BlockShape{kNvfp4BlockSize, 1};
}

}  // namespace fp8lab::sim::scaling
