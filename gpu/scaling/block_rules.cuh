// The per-block scale rules of the block-scaled quantizers (gpu/scaling/blocked.hpp), shared by
// the kernels (blocked.cu) and the host twin (host_twin.cu): from a block's amax (NaN ignored)
// and whether it held a NaN, the {scale, scale_inv, e8m0} of sim's BlockScaleRule for the recipe.
#pragma once

#include "gpu/scaling/rules.cuh"

namespace fp8lab::gpu::scaling {

struct TeRule {
  float fp8_max, eps, value_for_inf;
  bool pow2;
  template <Format F>
  FP8LAB_HD BlockScale operator()(float amax, bool) const {  // TE's fmaxf amax ignores NaN
    const float s = te_scale_from_amax(amax, fp8_max, pow2, eps, value_for_inf);
    return {s, div_rn(1.0f, s), 0};
  }
};

// Static scaling (sim QuantizeKind::kStatic): the plan's fixed multiplier for every block, no amax
// read; scale_inv = RN(1 / s), as sim::scaling::quantize_per_tensor's 1.0f / scale.
struct StaticRule {
  float scale;
  template <Format F>
  FP8LAB_HD BlockScale operator()(float, bool) const {
    return {scale, div_rn(1.0f, scale), 0};
  }
};

struct TorchaoRule {
  float fp8_max;
  bool pow2;
  template <Format F>
  FP8LAB_HD BlockScale operator()(float amax, bool has_nan) const {  // NaN propagates
    const float s =
        torchao_scale_from_amax(has_nan ? bits_float(0x7FC0'0000u) : amax, fp8_max, pow2);
    return {s, canonical_nan(div_rn(1.0f, s)), 0};
  }
};

struct MxRule {
  E8M0Mode mode;
  TorchaoVersion torchao;  // which torchao to_mx the torchao modes follow
  template <Format F>
  FP8LAB_HD BlockScale operator()(float amax, bool has_nan) const {  // te ignores NaN, torchao not
    const float a = (has_nan && mode != E8M0Mode::kTe) ? bits_float(0x7FC0'0000u) : amax;
    const std::uint32_t e = mx_scale_code<F>(a, mode, torchao);
    return {mx_block_multiplier(e, mode, torchao), decode_e8m0(e), static_cast<std::uint8_t>(e)};
  }
};

}  // namespace fp8lab::gpu::scaling
