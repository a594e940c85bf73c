// gpu::scaling::host_twin (gpu/scaling/blocked.hpp): the block-scaled quantizers on the host, one
// block after another, with the kernels' rules (block_rules.cuh), casts (cast.cuh) and statistics
// (quantize_common.cuh). Per-tensor current scaling is one block covering the tensor with the
// current-scaling rule (value_for_inf = FLT_MAX), which is what its three launches compute; static
// scaling is that block with the plan's fixed multiplier (StaticRule).
#include <cfloat>
#include <cmath>

#include "gpu/quantize_common.cuh"
#include "gpu/scaling/block_rules.cuh"
#include "gpu/scaling/blocked.hpp"

namespace fp8lab::gpu::scaling::host_twin {
namespace {

template <Format F, typename Rule>
void blocked(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t br, std::int64_t bc,
             const Rule& rule, const BlockedOutputs& out) {
  const std::int64_t scale_cols = (cols + bc - 1) / bc;
  const std::int64_t blocks = ((rows + br - 1) / br) * scale_cols;
  detail::Counters c;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t r0 = (b / scale_cols) * br, c0 = (b % scale_cols) * bc;
    const std::int64_t r1 = std::min(rows, r0 + br), c1 = std::min(cols, c0 + bc);
    float amax = 0.0f;
    bool has_nan = false;
    for (std::int64_t r = r0; r < r1; ++r) {
      for (std::int64_t col = c0; col < c1; ++col) {
        const float v = x[r * cols + col];
        amax = std::fmax(amax, std::fabs(v));
        has_nan |= std::isnan(v);
      }
    }
    const BlockScale s = rule.template operator()<F>(amax, has_nan);
    out.scale_inv[b] = s.scale_inv;
    if (out.scale != nullptr) out.scale[b] = s.scale;
    if (out.e8m0 != nullptr) out.e8m0[b] = s.e8m0;
    for (std::int64_t r = r0; r < r1; ++r) {
      for (std::int64_t col = c0; col < c1; ++col) {
        const float v = x[r * cols + col];
        const float y = mul_rn(v, s.scale);
        const std::uint32_t code = cast_rn<F, Overflow::kSatFinite>(y);
        c.add<F>(v, y, code, Fp8<F>::rn_overflows(y));
        out.codes[r * cols + col] = static_cast<std::uint8_t>(code);
      }
    }
  }
  if (out.stats != nullptr) {
    out.stats->amax = std::fmax(out.stats->amax, c.amax);
    out.stats->count += static_cast<unsigned long long>(rows * cols);
    out.stats->saturated += c.saturated;
    out.stats->underflowed += c.underflowed;
    out.stats->nan += c.nan;
  }
}

template <typename Rule>
void run(const char* function, const float* x, std::int64_t rows, std::int64_t cols,
         std::int64_t br, std::int64_t bc, sim::Format format, const Rule& rule,
         const BlockedOutputs& out) {
  detail::check_fp8(format, function);
  detail::check_blocked_shape(function, rows, cols, br, bc);  // as the device entry points
  if (format == Format::E4M3) {
    blocked<Format::E4M3>(x, rows, cols, br, bc, rule, out);
  } else {
    blocked<Format::E5M2>(x, rows, cols, br, bc, rule, out);
  }
}

float fp8_max(sim::Format format) { return static_cast<float>(sim::spec(format).max_finite()); }

}  // namespace

void quantize_block_te(const float* x, std::int64_t rows, std::int64_t cols,
                       std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                       bool pow2, float eps, float value_for_inf, const BlockedOutputs& out) {
  run("host_twin::quantize_block_te", x, rows, cols, block_rows, block_cols, format,
      TeRule{fp8_max(format), eps, value_for_inf, pow2}, out);
}

void quantize_axiswise_torchao(const float* x, std::int64_t rows, std::int64_t cols, bool rowwise,
                               sim::Format format, bool pow2, const BlockedOutputs& out) {
  run("host_twin::quantize_axiswise_torchao", x, rows, cols, rowwise ? 1 : rows, rowwise ? cols : 1,
      format, TorchaoRule{fp8_max(format), pow2}, out);
}

void quantize_mx(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                 std::int64_t block_cols, sim::Format format, E8M0Mode mode, TorchaoVersion torchao,
                 const BlockedOutputs& out) {
  run("host_twin::quantize_mx", x, rows, cols, block_rows, block_cols, format,
      MxRule{mode, torchao}, out);
}

void quantize_current_te(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                         bool pow2, float eps, const BlockedOutputs& out) {
  run("host_twin::quantize_current_te", x, rows, cols, rows, cols, format,
      TeRule{fp8_max(format), eps, FLT_MAX, pow2}, out);
}

void quantize_tensorwise_torchao(const float* x, std::int64_t rows, std::int64_t cols,
                                 sim::Format format, bool pow2, const BlockedOutputs& out) {
  run("host_twin::quantize_tensorwise_torchao", x, rows, cols, rows, cols, format,
      TorchaoRule{fp8_max(format), pow2}, out);
}

void quantize_static(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                     float scale, const BlockedOutputs& out) {
  detail::check_static_scale("host_twin::quantize_static", scale);
  run("host_twin::quantize_static", x, rows, cols, rows, cols, format, StaticRule{scale}, out);
}

}  // namespace fp8lab::gpu::scaling::host_twin
