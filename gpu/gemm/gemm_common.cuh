// What the GEMM kernels share (gpu/gemm/gemm.hpp): the resolved problem (shape and K-block
// length), operand element and scale access, decode tables, and the output epilogue.
#pragma once

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

__device__ inline std::int64_t element_index(const DeviceGemmOperand& op, std::int64_t outer,
                                             std::int64_t k) {
  return op.k_is_cols ? outer * op.cols + k : k * op.cols + outer;
}

// scale_inv of the operand's element (outer, k), i.e. its scale in the K-block holding k.
__device__ inline float scale_at(const DeviceGemmOperand& op, std::int64_t outer, std::int64_t k) {
  const std::int64_t r = op.k_is_cols ? outer : k, c = op.k_is_cols ? k : outer;
  const std::int64_t scale_cols = (op.cols + op.block_cols - 1) / op.block_cols;
  return op.scale_inv[(r / op.block_rows) * scale_cols + c / op.block_cols];
}

__device__ inline float decode_any(std::uint32_t code, sim::Format format) {
  return format == Format::E4M3 ? decode<Format::E4M3>(code) : decode<Format::E5M2>(code);
}

// 2^(raw exponent) of a code for the Hopper model: a subnormal has its format's minimum normal
// exponent; zero, NaN and Inf give 0 so that they never win the alignment maximum.
template <Format F>
__device__ inline float exponent_power(std::uint32_t code) {
  using T = Fp8<F>;
  const float value = decode<F>(code);
  if (value == 0.0f || !isfinite(value)) return 0.0f;
  const int field = static_cast<int>((code & T::kMagnitudeMask) >> T::kMantissaBits);
  const int e = (field > 1 ? field : 1) - T::kBias;  // >= -14, <= 15
  return __uint_as_float(static_cast<std::uint32_t>(e + 127) << 23);
}
__device__ inline float exponent_power_any(std::uint32_t code, sim::Format format) {
  return format == Format::E4M3 ? exponent_power<Format::E4M3>(code)
                                : exponent_power<Format::E5M2>(code);
}

// fp32 -> bf16 round to nearest even on the bit pattern (sim::fp32_to_bf16): NaN -> 0x7FFF;
// returned as the bf16 value's exact fp32 value.
__device__ inline float round_to_bf16(float v) {
  const std::uint32_t bits = __float_as_uint(v);
  if ((bits & kF32AbsMask) > kF32Inf) return __uint_as_float(0x7FFFu << 16);
  const std::uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  return __uint_as_float(rounded & 0xFFFF'0000u);
}

// gemm.hpp's output epilogue: bias, canonical NaN 0x7FFFFFFF, bf16 rounding.
__device__ inline float finish(float total, std::int64_t n, const DeviceGemmOptions& options) {
  float v = total;
  if (options.bias != nullptr) v = __fadd_rn(v, options.bias[n]);
  if (isnan(v)) v = __uint_as_float(0x7FFF'FFFFu);
  return options.bf16_output ? round_to_bf16(v) : v;
}

// One K-block's contribution: t = RN(P * RN(sa * sb)); total = t for the first block, else
// RN(total + t).
__device__ inline float add_block(float total, bool first, float partial, float sa, float sb) {
  const float t = __fmul_rn(partial, __fmul_rn(sa, sb));
  return first ? t : __fadd_rn(total, t);
}

}  // namespace fp8lab::gpu::gemm_detail
