// What the GEMM kernels share (gpu/gemm/gemm.hpp): the resolved problem (shape and K-block
// length), operand element and scale access, decode tables, the per-output Hopper model and the
// output epilogue. Everything per element is __host__ __device__: gpu/gemm/host_twin.cu runs the
// same code on the host so that tests without a GPU check the models' logic against sim/.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpu/cast.cuh"
#include "gpu/gemm/gemm.hpp"

namespace fp8lab::gpu::gemm_detail {

struct Problem {
  DeviceGemmOperand a, b;
  std::int64_t m, n, k;
  std::int64_t g;  // K-block length: block j is k in [j*g, min((j+1)*g, K))
  DeviceGemmOptions options;
  float* out;
};

// Validates the operands and resolves M, N, K and g (sim/gemm/gemm.hpp "K-blocks"): g = K when
// both operands' scale runs along K cover K, else the smaller run, which the other run must be a
// multiple of (or cover K).
Problem resolve(const DeviceGemmOperand& a, const DeviceGemmOperand& b,
                const DeviceGemmOptions& options, float* out);

// The index of element (outer, k) in a quantized (DeviceGemmOperand) or dense
// (DeviceDenseOperand) operand stored [outer, K] (k_is_cols) or [K, outer].
template <typename Operand>
FP8LAB_HD inline std::int64_t element_index(const Operand& op, std::int64_t outer, std::int64_t k) {
  return op.k_is_cols ? outer * op.cols + k : k * op.cols + outer;
}

// scale_inv of the operand's element (outer, k), i.e. its scale in the K-block holding k.
FP8LAB_HD inline float scale_at(const DeviceGemmOperand& op, std::int64_t outer, std::int64_t k) {
  const std::int64_t r = op.k_is_cols ? outer : k, c = op.k_is_cols ? k : outer;
  const std::int64_t scale_cols = (op.cols + op.block_cols - 1) / op.block_cols;
  return op.scale_inv[(r / op.block_rows) * scale_cols + c / op.block_cols];
}

FP8LAB_HD inline float decode_any(std::uint32_t code, sim::Format format) {
  return format == Format::E4M3 ? decode<Format::E4M3>(code) : decode<Format::E5M2>(code);
}

// 2^(raw exponent) of a code for the Hopper model: a subnormal has its format's minimum normal
// exponent; zero, NaN and Inf give 0 so that they never win the alignment maximum.
template <Format F>
FP8LAB_HD inline float exponent_power(std::uint32_t code) {
  using T = Fp8<F>;
  const float value = decode<F>(code);
  if (value == 0.0f || !std::isfinite(value)) return 0.0f;
  const int field = static_cast<int>((code & T::kMagnitudeMask) >> T::kMantissaBits);
  const int e = (field > 1 ? field : 1) - T::kBias;  // -14 .. 15
  return bits_float(static_cast<std::uint32_t>(e + 127) << 23);
}
FP8LAB_HD inline float exponent_power_any(std::uint32_t code, sim::Format format) {
  return format == Format::E4M3 ? exponent_power<Format::E4M3>(code)
                                : exponent_power<Format::E5M2>(code);
}

// fp32 -> bf16 round to nearest even on the bit pattern (sim::fp32_to_bf16): NaN -> 0x7FFF;
// returned as the bf16 value's exact fp32 value.
FP8LAB_HD inline float round_to_bf16(float v) {
  const std::uint32_t bits = float_bits(v);
  if ((bits & kF32AbsMask) > kF32Inf) return bits_float(0x7FFFu << 16);
  const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  return bits_float(rounded & 0xFFFF'0000u);
}

// gemm.hpp's output epilogue: bias, canonical NaN 0x7FFFFFFF, bf16 rounding.
FP8LAB_HD inline float finish(float total, std::int64_t n, const DeviceGemmOptions& options) {
  float v = total;
  if (options.bias != nullptr) v = add_rn(v, options.bias[n]);
  if (std::isnan(v)) v = bits_float(0x7FFF'FFFFu);
  return options.bf16_output ? round_to_bf16(v) : v;
}

// One K-block's contribution: t = RN(P * RN(sa * sb)); total = t for the first block, else
// RN(total + t).
FP8LAB_HD inline float add_block(float total, bool first, float partial, float sa, float sb) {
  const float t = mul_rn(partial, mul_rn(sa, sb));
  return first ? t : add_rn(total, t);
}

// Decoded values and exponent powers of the 256 codes of each operand's format.
struct CodeTables {
  const float* value_a;
  const float* value_b;
  const float* power_a;
  const float* power_b;
};

inline constexpr int kHopperGroupK = 32;        // sim::kHopperGroupK: elements per wgmma along K
inline constexpr int kHopperPromotionK = 128;   // sim::kHopperPromotionK: CUTLASS interval 4
inline constexpr int kHopperFractionBits = 13;  // sim::kHopperFractionBits: e8m13

// Output (m, n) of the Hopper model, walking K-blocks and 32-element groups in sim's order. Per
// group, with c the e8m13 accumulator:
//   1. mx = max(2^(e_a + e_b) over nonzero finite products, 2^e_c if c is finite and nonzero)
//   2. scale = 2^13 / mx (exact; 1 when mx = 0); every term x (a*b exact in fp32, and c) becomes
//      trunc(x * scale): x * scale is exact, trunc rounds toward zero onto the grid 2^(E-13)
//   3. the truncated terms are integers below 2^15 in magnitude; 33 of them sum below 2^24, so
//      the fp32 sum is exact (Inf/NaN terms give what the float64 sum gives)
//   4. V = sum * (1 / scale) (exact); clearing the low 10 mantissa bits truncates V to 13
//      fraction bits (e8m13); V + 0 turns -0 into +0; NaN becomes 0x7FFFFFFF
//   promotion: P = RN(P + c), c = +0 after a group ending a multiple of 128 past the block start
//   (split accumulator) and after the block's last group.
FP8LAB_HD inline float hopper_output(const Problem& p, const CodeTables& t, std::int64_t m,
                                     std::int64_t n, bool split_accumulator) {
  const float two_pow_frac = static_cast<float>(1 << kHopperFractionBits);
  const std::uint32_t e8m13_mask = ~((1u << (23 - kHopperFractionBits)) - 1u);
  float total = 0.0f;
  for (std::int64_t k0 = 0, j = 0; k0 < p.k; k0 += p.g, ++j) {
    const std::int64_t k1 = k0 + p.g < p.k ? k0 + p.g : p.k;
    float partial = 0.0f, c = 0.0f;
    for (std::int64_t g0 = k0; g0 < k1; g0 += kHopperGroupK) {
      const std::int64_t g1 = g0 + kHopperGroupK < k1 ? g0 + kHopperGroupK : k1;
      float mx = std::isfinite(c) ? bits_float(float_bits(c) & kF32Inf) : 0.0f;
      for (std::int64_t k = g0; k < g1; ++k) {
        const std::uint8_t ca = p.a.codes[element_index(p.a, m, k)];
        const std::uint8_t cb = p.b.codes[element_index(p.b, n, k)];
        mx = std::fmax(mx, mul_rn(t.power_a[ca], t.power_b[cb]));
      }
      const float scale = mx == 0.0f ? 1.0f : div_rn(two_pow_frac, mx);
      float sum = std::trunc(mul_rn(c, scale));
      for (std::int64_t k = g0; k < g1; ++k) {
        const std::uint8_t ca = p.a.codes[element_index(p.a, m, k)];
        const std::uint8_t cb = p.b.codes[element_index(p.b, n, k)];
        sum = add_rn(sum, std::trunc(mul_rn(mul_rn(t.value_a[ca], t.value_b[cb]), scale)));
      }
      const float value = mul_rn(sum, div_rn(1.0f, scale));
      const float result = add_rn(bits_float(float_bits(value) & e8m13_mask), 0.0f);
      c = std::isnan(result) ? bits_float(0x7FFF'FFFFu) : result;
      if ((split_accumulator && (g1 - k0) % kHopperPromotionK == 0) || g1 == k1) {
        partial = add_rn(partial, c);
        c = 0.0f;
      }
    }
    total = add_block(total, j == 0, partial, scale_at(p.a, m, k0), scale_at(p.b, n, k0));
  }
  return finish(total, n, p.options);
}

// The high-precision GEMM's problem: dense operands, one K-block, unit scales (RN(P * 1) = P).
struct DenseProblem {
  DeviceDenseOperand a, b;
  std::int64_t m, n, k;
  bool round_to_bf16;
  DeviceGemmOptions options;  // bias and output type; model unused
  float* out;
};

DenseProblem resolve_dense(const DeviceDenseOperand& a, const DeviceDenseOperand& b,
                           const DenseGemmOptions& options, float* out);

// An operand value as the high-precision GEMM sees it: optionally rounded RN to bf16.
FP8LAB_HD inline float dense_value(const DenseProblem& p, const DeviceDenseOperand& op,
                                   std::int64_t outer, std::int64_t k) {
  const float v = op.data[element_index(op, outer, k)];
  return p.round_to_bf16 ? round_to_bf16(v) : v;
}

// Output (m, n) of the high-precision GEMM: acc = RN(acc + RN(a * b)) in increasing k.
FP8LAB_HD inline float high_precision_output(const DenseProblem& p, std::int64_t m,
                                             std::int64_t n) {
  float acc = 0.0f;
  for (std::int64_t k = 0; k < p.k; ++k) {
    acc = add_rn(acc, mul_rn(dense_value(p, p.a, m, k), dense_value(p, p.b, n, k)));
  }
  return finish(add_block(0.0f, true, acc, 1.0f, 1.0f), n, p.options);
}

// Output (m, n) of the fp32_seq model, one element at a time: the order the tiled kernel keeps
// (acc = RN(acc + a*b) as one fma per k, exact products; fold at each K-block end).
FP8LAB_HD inline float fp32_seq_output(const Problem& p, const CodeTables& t, std::int64_t m,
                                       std::int64_t n) {
  float total = 0.0f;
  for (std::int64_t k0 = 0, j = 0; k0 < p.k; k0 += p.g, ++j) {
    const std::int64_t k1 = k0 + p.g < p.k ? k0 + p.g : p.k;
    float acc = 0.0f;
    for (std::int64_t k = k0; k < k1; ++k) {
      acc = fma_rn(t.value_a[p.a.codes[element_index(p.a, m, k)]],
                   t.value_b[p.b.codes[element_index(p.b, n, k)]], acc);
    }
    total = add_block(total, j == 0, acc, scale_at(p.a, m, k0), scale_at(p.b, n, k0));
  }
  return finish(total, n, p.options);
}

}  // namespace fp8lab::gpu::gemm_detail
