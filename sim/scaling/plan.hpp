// What to quantize one operand of one GEMM with: the lowered form of a recipe (recipes/lowering
// makes it, once per Linear tensor and GEMM). Executors only follow a plan:
//   sim::scaling::quantize(plan, x)          sim/scaling/execute.hpp (the reference)
//   gpu::scaling::quantize(plan, x, out)     gpu/scaling/blocked.hpp (and its host twin)
//   DelayedScalingState / the cuda backend   the stateful kDelayed kind, with `delayed`'s rule
//
// Header-only (sim/settings.hpp and sim/format.hpp only), so that gpu/ may include it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/format.hpp"
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

// TE DelayedScaling's settings (docs/numerics.md §2.1, te-accelerate.md §2) and the one definition of
// its update rule: which updates recompute the scale (the interval rule) and the scaled max the
// new scale divides (S = RN(scaled_max / amax), fused_amax_and_scale_update). sim's
// DelayedScalingState, the cuda backend's device state and the shadow check all ask it.
struct DelayedScalingConfig {
  std::int64_t margin = 0;  // scale = (fp8_max * 2^-margin) / amax
  Fp8Format fp8_format = Fp8Format::kHybrid;
  std::int64_t amax_history_len = 1024;  // >= 1
  AmaxComputeAlgo amax_compute_algo = AmaxComputeAlgo::kMax;
  // Recompute the scale only on updates whose step index (0, 1, 2, ... counted per pass) is a
  // multiple of `interval`; the history still rolls on every update. 1 is TE's behaviour (TE
  // ignores the field, §1.2). >= 1.
  std::int64_t interval = 1;

  // The interval rule: whether update number `update` (0, 1, 2, ... of one pass) recomputes.
  constexpr bool recomputes_scale(std::int64_t update) const { return update % interval == 0; }
  // Spelled out here and below: gpu/ compiles as C++17 (nvcc), without defaulted comparisons.
  friend constexpr bool operator==(const DelayedScalingConfig& a, const DelayedScalingConfig& b) {
    return a.margin == b.margin && a.fp8_format == b.fp8_format &&
           a.amax_history_len == b.amax_history_len && a.amax_compute_algo == b.amax_compute_algo &&
           a.interval == b.interval;
  }
};

// `scaled_max` of the update, computed as TE does on the host in fp32 (delayed_scaling.cu):
// RN(fp8_max * 2^-margin); exact for every margin whose 2^-margin is an fp32 value. The margin
// is clamped to +-1000 before ldexp takes it as an int: 2^-m is already 0 in fp32 for m >= 150 and
// +Inf for m <= -128, so the clamp changes no result and a 64-bit margin is never truncated.
inline float delayed_scaled_max(float fp8_max, std::int64_t margin) {
  const auto m = static_cast<int>(std::clamp<std::int64_t>(margin, -1000, 1000));
  // TE: fp8_dtype_max(dtype) * std::pow(2.f, -margin); ldexp gives the same, exact power of two.
  return fp8_max * std::ldexp(1.0f, -m);
}
// The same for the pass whose tensors have element format `format` (fp8_max from its spec).
inline float delayed_scaled_max(const DelayedScalingConfig& config, Format format) {
  return delayed_scaled_max(static_cast<float>(spec(format).max_finite()), config.margin);
}

// Which quantizer a plan runs.
enum class QuantizeKind : std::uint8_t {
  kDelayed,            // per tensor with the pass slot's running scale (stateful: `delayed`)
  kCurrentTe,          // TE Float8CurrentScaling, per tensor (quantize_current_te)
  kTensorwiseTorchao,  // torchao tensorwise, per tensor (quantize_tensorwise_torchao)
  kAxiswiseTorchao,    // torchao axiswise: one scale per row or column along `axis`
  kBlockTe,            // TE Float8BlockScaling in `block` (quantize_block_te)
  kMx,                 // MX (FP8, FP6, FP4 elements) in `block` with `mx_mode` and `torchao`
  kNvfp4,              // NVFP4 in `block` (1x16, 16x1, 16x16) with `nvfp4_mode` (quantize_nvfp4)
  kHighPrecision,      // nothing to quantize: the GEMM runs in high precision
  kStatic,             // per tensor with the fixed multiplier `static_scale` (quantize_per_tensor)
};
constexpr const char* to_string(QuantizeKind kind) {
  switch (kind) {
    case QuantizeKind::kDelayed: return "delayed";
    case QuantizeKind::kCurrentTe: return "current_te";
    case QuantizeKind::kTensorwiseTorchao: return "tensorwise_torchao";
    case QuantizeKind::kAxiswiseTorchao: return "axiswise_torchao";
    case QuantizeKind::kBlockTe: return "block_te";
    case QuantizeKind::kMx: return "mx";
    case QuantizeKind::kNvfp4: return "nvfp4";
    case QuantizeKind::kHighPrecision: return "high_precision";
    case QuantizeKind::kStatic: return "static";
  }
  return "?";
}

// Every quantizer casts q = cast_satfinite(RN(x * s)) (docs/numerics.md §2); the plan says how s is
// chosen and over which elements. `format` is E4M3 / E5M2, or for kMx also E2M1 / E2M3 / E3M2
// (MXFP4, MXFP6), and E2M1 for kNvfp4.
struct QuantizePlan {
  QuantizeKind kind = QuantizeKind::kCurrentTe;
  Format format = Format::E4M3;  // the element format
  // Elements per scale; 0 stands for the tensor's whole dimension (per tensor: {0, 0};
  // axiswise: {1, 0} or {0, 1}).
  BlockShape block{0, 0};
  ScaleAxis axis = ScaleAxis::kRowwise;             // along the GEMM's K (sim/settings.hpp)
  bool pow2 = false;                                // power-of-2 scales (current, torchao, block)
  E8M0Mode mx_mode = E8M0Mode::kTe;                 // kMx only
  TorchaoVersion torchao = TorchaoVersion::kV0_18;  // kMx with a torchao mode only
  Nvfp4Mode nvfp4_mode = Nvfp4Mode::kTe;            // kNvfp4 only
  // kNvfp4, TE's NVFP4BlockScaling parts (fp4-formats.md §4): `rht` applies the 16-point
  // random Hadamard transform (sim/rht.hpp, TE's sign vector) along the rows before the amax and
  // the cast (the wgrad operands, whose K is the token dimension); `stochastic_rounding` rounds
  // the elements with sim/fp4_stochastic.hpp's rule and a caller-given Philox stream (gradients).
  // kMx (Tseng et al.'s MXFP4 backward, sim/scaling/mx_dither.hpp): `rht` multiplies the operand
  // along K, in chunks of 64, by diag(signs) H64 / 8 with the caller's per-call signs (bf16
  // output) before the amax and the cast; `stochastic_rounding` (E2M1 only) rounds with their
  // 'dither_scale' rule (E8M0 floor scales, 3/4 prescale, stochastic rounding, 4/3 on
  // dequantization) and a caller-given Philox stream.
  bool rht = false;
  bool stochastic_rounding = false;
  DelayedScalingConfig delayed{};  // kDelayed only
  // kStatic only: the fixed multiplier s of q = cast_satfinite(RN(x * s)); no amax is measured to
  // choose it (unit scaling, u-muP: arXiv 2407.17465).
  float static_scale = 1.0f;

  // The block shape a tensor [rows, cols] is stored with (QuantizedTensor::block_rows/cols).
  constexpr BlockShape blocks(std::int64_t rows, std::int64_t cols) const {
    return {block.rows == 0 ? rows : block.rows, block.cols == 0 ? cols : block.cols};
  }
  // Whether the result carries E8M0 codes (QuantizedTensor::scale_e8m0): MX only.
  constexpr bool stores_e8m0() const { return kind == QuantizeKind::kMx; }
  friend constexpr bool operator==(const QuantizePlan& a, const QuantizePlan& b) {
    return a.kind == b.kind && a.format == b.format && a.block == b.block && a.axis == b.axis &&
           a.pow2 == b.pow2 && a.mx_mode == b.mx_mode && a.torchao == b.torchao &&
           a.nvfp4_mode == b.nvfp4_mode && a.rht == b.rht &&
           a.stochastic_rounding == b.stochastic_rounding && a.delayed == b.delayed &&
           a.static_scale == b.static_scale;
  }
};

}  // namespace fp8lab::sim::scaling
