// The per-block code of the FP4/FP6 quantizers and the RHT (gpu/scaling/fp4.hpp), shared by the
// kernels (fp4.cu: one thread per block or chunk) and the host twins (fp4_host_twin.cu: a loop):
//
//   mx_subbyte_block<F>     one block of sim::scaling::quantize_mx / quantize_mx_2d (E2M1/E2M3/E3M2)
//   nvfp4_global            sim::scaling::nvfp4_global_scale
//   nvfp4_block_scale       sim::scaling::nvfp4_block_scale
//   nvfp4_block_multiplier  sim::scaling::nvfp4_block_multiplier
//   nvfp4_block             one block of sim::scaling::quantize_nvfp4
//   rht_chunk_bf16          sim::random_hadamard_chunk_bf16
//
// Strict fp: every fp32 operation is one correctly rounded mul_rn / div_rn (gpu/cast.cuh), never
// contracted; the RHT's special path adds in double with __dadd_rn on the device.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "gpu/cast.cuh"
#include "gpu/gemm/gemm_common.cuh"  // round_to_bf16 (sim::fp32_to_bf16's twin)
#include "gpu/scaling/fp4.hpp"       // Fp4Outputs
#include "gpu/scaling/rules.cuh"
#include "gpu/subbyte.cuh"
#include "sim/scaling/subbyte_specials.hpp"
#include "sim/settings.hpp"

namespace fp8lab::gpu::scaling {

// The block b of a [rows, cols] tensor in br x bc blocks: rows [r0, r1), cols [c0, c1).
struct BlockRange {
  std::int64_t r0, r1, c0, c1;
};
FP8LAB_HD inline BlockRange block_range(std::int64_t b, std::int64_t rows, std::int64_t cols,
                                        std::int64_t br, std::int64_t bc) {
  const std::int64_t scale_cols = (cols + bc - 1) / bc;
  const std::int64_t r0 = (b / scale_cols) * br, c0 = (b % scale_cols) * bc;
  return {r0, r0 + br < rows ? r0 + br : rows, c0, c0 + bc < cols ? c0 + bc : cols};
}

// max |x| over the block with NaN ignored (fmax), and whether it held a NaN: sim's block walk.
struct BlockAmax {
  float amax;
  bool has_nan;
};
FP8LAB_HD inline BlockAmax block_amax(const float* x, std::int64_t cols, const BlockRange& k) {
  BlockAmax a{0.0f, false};
  for (std::int64_t r = k.r0; r < k.r1; ++r) {
    for (std::int64_t c = k.c0; c < k.c1; ++c) {
      const float v = x[r * cols + c];
      a.amax = std::fmax(a.amax, std::fabs(v));
      a.has_nan = a.has_nan || std::isnan(v);
    }
  }
  return a;
}

// x * m with x86's rule for a NaN operand (SSE mulss: the first NaN operand, quieted), which sim
// computes with, as torchao does on a CPU. The GPU's own multiply returns 0x7FFFFFFF for any NaN,
// and a NaN's payload picks the code under SubbyteNan::kRoundedBits (torchao's MX modes): seen on
// an H200 (docs/device-log.md, 2026-12-04) as code 0x4 where sim has 0x3, for NaN elements and for
// every element of a NaN block (torchao main's multiplier is NaN there). A NaN made from no NaN
// (Inf x 0: an Inf element of a 0.18 block whose multiplier is 0) is x86's default NaN, "real
// indefinite" 0xFFC00000, sign set; an H200 gave 0x7FFFFFFF there too (code 0x4 for sim's 0xB).
FP8LAB_HD inline float mul_nan_as_x86(float x, float m) {
  if (std::isnan(x)) return bits_float(float_bits(x) | 0x0040'0000u);
  if (std::isnan(m)) return bits_float(float_bits(m) | 0x0040'0000u);
  const float product = mul_rn(x, m);
  return std::isnan(product) ? bits_float(0xFFC0'0000u) : product;
}

// torchao's nvfp4_quantize: data_hp * reciprocal_scale, where torch (measured on an x86 CPU) gives
// the reciprocal's NaN when both are NaN (sim/scaling/nvfp4.cpp, torch_mul_scale).
FP8LAB_HD inline float mul_multiplier_nan_first(float x, float m) {
  if (std::isnan(m)) return bits_float(float_bits(m) | 0x0040'0000u);
  return mul_nan_as_x86(x, m);
}

// a / b with x86's rule (divss: the first NaN operand, quieted; 0/0 and Inf/Inf the default NaN).
FP8LAB_HD inline float div_nan_as_x86(float a, float b) {
  if (std::isnan(a)) return bits_float(float_bits(a) | 0x0040'0000u);
  if (std::isnan(b)) return bits_float(float_bits(b) | 0x0040'0000u);
  const float q = div_rn(a, b);
  return std::isnan(q) ? bits_float(0xFFC0'0000u) : q;
}

// Codes of the block: cast_subbyte(RN(x * multiplier)), sim's sub-byte pass (`nan_multiplier_first`
// for NVFP4's torchao mode).
template <Format F>
FP8LAB_HD inline void cast_block(const float* x, std::int64_t cols, const BlockRange& k,
                                 float multiplier, SubbyteSpecials specials, std::uint8_t* codes,
                                 bool nan_multiplier_first = false) {
  for (std::int64_t r = k.r0; r < k.r1; ++r) {
    for (std::int64_t c = k.c0; c < k.c1; ++c) {
      const float v = x[r * cols + c];
      const float y = nan_multiplier_first ? mul_multiplier_nan_first(v, multiplier)
                                           : mul_nan_as_x86(v, multiplier);
      codes[r * cols + c] = cast_subbyte<F>(y, specials);
    }
  }
}

// MXFP4/MXFP6: the E8M0 rule of the mode (rules.cuh, over the element's FormatSpec), the
// torchao modes' NaN-propagating amax, the mode's element specials.
template <Format F>
FP8LAB_HD inline void mx_subbyte_block(const float* x, std::int64_t rows, std::int64_t cols,
                                       std::int64_t br, std::int64_t bc, std::int64_t b,
                                       E8M0Mode mode, TorchaoVersion torchao,
                                       const Fp4Outputs& out) {
  const BlockRange k = block_range(b, rows, cols, br, bc);
  const BlockAmax a = block_amax(x, cols, k);
  const float amax = (a.has_nan && mode != E8M0Mode::kTe) ? bits_float(0x7FC0'0000u) : a.amax;
  const std::uint32_t e = mx_scale_code<F>(amax, mode, torchao);
  const float multiplier = mx_block_multiplier(e, mode, torchao);
  out.scale_bytes[b] = static_cast<std::uint8_t>(e);
  if (out.scale != nullptr) out.scale[b] = multiplier;
  if (out.scale_inv != nullptr) out.scale_inv[b] = decode_e8m0(e);
  cast_block<F>(x, cols, k, multiplier, sim::scaling::mx_subbyte_specials(mode, torchao),
                out.codes);
}

// ---- NVFP4 (sim/scaling/nvfp4.hpp spells out both modes' formulas and their sources) ----------
constexpr float kNvfp4E4M3TimesE2M1Max = 2688.0f;    // 448 * 6, exact
constexpr float kNvfp4InverseE2M1Max = 1.0f / 6.0f;  // TE's fp4_max_inv, rounded once
constexpr float kNvfp4E4M3Tiny = 0.015625f;          // torchao's E4M3_EPS: 2^-6

struct Nvfp4Global {
  float amax, encode, decode;
};

FP8LAB_HD inline Nvfp4Global nvfp4_global(float amax, Nvfp4Mode mode) {
  Nvfp4Global g{amax, 1.0f, 1.0f};
  if (mode == Nvfp4Mode::kTe) {
    g.encode = std::fmin(div_rn(kNvfp4E4M3TimesE2M1Max, amax), FLT_MAX);
    if (amax == 0.0f || g.encode == 0.0f) g.encode = 1.0f;
    g.decode = div_rn(1.0f, g.encode);
  } else {
    g.decode = div_nan_as_x86(amax, kNvfp4E4M3TimesE2M1Max);
    g.encode = div_nan_as_x86(1.0f, g.decode);
  }
  return g;
}

FP8LAB_HD inline std::uint8_t nvfp4_block_scale(float block_amax, const Nvfp4Global& g,
                                                Nvfp4Mode mode) {
  if (mode == Nvfp4Mode::kTe) {
    return cast_rn<Format::E4M3, Overflow::kSatFinite>(
        mul_rn(block_amax, mul_rn(g.encode, kNvfp4InverseE2M1Max)));
  }
  // torch.clamp keeps a NaN's bits, and torch's E4M3 cast keeps its sign (0x7F / 0xFF).
  const float scaled = div_nan_as_x86(div_nan_as_x86(block_amax, 6.0f), g.decode);
  if (std::isnan(scaled)) return (float_bits(scaled) >> 31) != 0 ? 0xFF : 0x7F;
  const float clamped = scaled < kNvfp4E4M3Tiny ? kNvfp4E4M3Tiny
                                                : (scaled > 448.0f ? 448.0f : scaled);
  return cast_rn<Format::E4M3, Overflow::kSatFinite>(clamped);
}

FP8LAB_HD inline float nvfp4_block_multiplier(std::uint8_t scale, const Nvfp4Global& g,
                                              Nvfp4Mode mode) {
  const float s = decode<Format::E4M3>(scale);
  if (mode == Nvfp4Mode::kTe) return std::fmin(div_rn(1.0f, mul_rn(s, g.decode)), FLT_MAX);
  // c10 decodes the E4M3 NaN bytes 0x7F / 0xFF to 0x7FF00000 / 0xFFF00000.
  const float torch_s =
      (scale & 0x7Fu) == 0x7Fu ? bits_float((scale & 0x80u) ? 0xFFF0'0000u : 0x7FF0'0000u) : s;
  return div_nan_as_x86(g.encode, torch_s);
}

FP8LAB_HD inline void nvfp4_block(const float* x, std::int64_t rows, std::int64_t cols,
                                  std::int64_t br, std::int64_t bc, std::int64_t b,
                                  const Nvfp4Global& g, Nvfp4Mode mode, const Fp4Outputs& out) {
  const BlockRange k = block_range(b, rows, cols, br, bc);
  const BlockAmax a = block_amax(x, cols, k);
  const bool te = mode == Nvfp4Mode::kTe;
  const std::uint8_t s =
      nvfp4_block_scale(a.has_nan && !te ? bits_float(0x7FC0'0000u) : a.amax, g, mode);
  const float multiplier = nvfp4_block_multiplier(s, g, mode);
  out.scale_bytes[b] = s;
  if (out.scale != nullptr) out.scale[b] = multiplier;
  if (out.scale_inv != nullptr) out.scale_inv[b] = mul_rn(decode<Format::E4M3>(s), g.decode);
  cast_block<Format::E2M1>(x, cols, k, multiplier, sim::scaling::nvfp4_subbyte_specials(mode),
                           out.codes, mode == Nvfp4Mode::kTorchao);
}

// |x| folded into a tensor amax as fp32 bits (non-negative floats order as their bits): TE's
// ignores NaN (0), torchao's propagates it as torch.max's full reduction does (0xFFFFFFFF, which
// exceeds every other pattern).
FP8LAB_HD inline std::uint32_t nvfp4_amax_bits(float v, Nvfp4Mode mode) {
  if (std::isnan(v)) return mode == Nvfp4Mode::kTe ? 0u : 0xFFFF'FFFFu;
  return float_bits(v) & kF32AbsMask;
}

// ---- The 16-point RHT (sim/rht.hpp: the bf16 MMA model, 25 fraction bits, RZ to fp32) ----------
constexpr int kRhtSize = 16;

FP8LAB_HD inline bool rht_negative(std::uint32_t sign_mask, int i, int j) {
  const unsigned v = static_cast<unsigned>(i & j);
  const unsigned parity = (v ^ (v >> 1) ^ (v >> 2) ^ (v >> 3)) & 1u;  // popcount of 4 bits, mod 2
  return (((sign_mask >> i) & 1u) ^ parity) != 0;
}

// sum * 2^exponent rounded toward zero to fp32; >= 2^128 is Inf (sim::gemm_detail).
FP8LAB_HD inline float rz_fp32(std::int64_t sum, int exponent) {
  if (sum == 0) return 0.0f;
  const double value = std::ldexp(static_cast<double>(sum), exponent);  // exact
  if (std::fabs(value) >= 0x1p128) return value < 0 ? -INFINITY : INFINITY;
#if defined(__CUDA_ARCH__)
  return __double2float_rz(value);
#else
  float rounded = static_cast<float>(value);
  if (std::fabs(static_cast<double>(rounded)) > std::fabs(value)) {
    rounded = std::nextafter(rounded, 0.0f);
  }
  return rounded;
#endif
}

FP8LAB_HD inline void rht_chunk_bf16(const float* x, std::uint32_t sign_mask, float* y) {
  constexpr int kFractionBits = 25, kZeroExponent = -133;
  float in[kRhtSize];
  bool special = false;
  for (int i = 0; i < kRhtSize; ++i) {
    in[i] = gemm_detail::round_to_bf16(x[i]);
    special = special || !std::isfinite(in[i]);
  }
  for (int j = 0; j < kRhtSize; ++j) {
    if (special) {  // the IEEE sum of the terms (NaN or an Inf), as sim's fp64 evaluation
      double sum = 0.0;
      for (int i = 0; i < kRhtSize; ++i) {
        sum = dadd_rn(sum, (rht_negative(sign_mask, i, j) ? -0.25 : 0.25) * in[i]);  // exact
      }
      y[j] = gemm_detail::round_to_bf16(static_cast<float>(sum));
      continue;
    }
    std::int64_t m[kRhtSize];
    int e[kRhtSize];
    int e_max = kZeroExponent;
    for (int i = 0; i < kRhtSize; ++i) {
      if (in[i] == 0.0f) {
        m[i] = 0, e[i] = kZeroExponent;
        continue;
      }
      const std::uint32_t bits = float_bits(in[i]);
      const int field = static_cast<int>((bits >> 23) & 0xFFu);
      std::int64_t mi = bits & 0x7F'FFFFu;
      if (field != 0) mi |= 0x80'0000;
      const bool neg = ((bits >> 31) != 0) != rht_negative(sign_mask, i, j);
      m[i] = neg ? -mi : mi;
      e[i] = (field == 0 ? -126 : field - 127) - 2;  // times 0.25
      e_max = e[i] > e_max ? e[i] : e_max;
    }
    std::int64_t sum = 0;
    for (int i = 0; i < kRhtSize; ++i) {
      if (m[i] == 0) continue;
      const int shift = e[i] - e_max + 2;  // onto the grid 2^(E_max - 25)
      if (shift >= 0) {
        sum += m[i] * (std::int64_t{1} << shift);
      } else if (shift > -63) {
        const std::int64_t magnitude = (m[i] < 0 ? -m[i] : m[i]) >> -shift;
        sum += m[i] < 0 ? -magnitude : magnitude;
      }
    }
    y[j] = gemm_detail::round_to_bf16(rz_fp32(sum, e_max - kFractionBits));
  }
}

}  // namespace fp8lab::gpu::scaling
