// gpu::scaling::quantize(plan, ...) and its host twin: one switch over the plan's kind, onto the
// device quantizers or their host twins (gpu/scaling/blocked.hpp).
#include <cfloat>
#include <stdexcept>
#include <string>

#include "gpu/scaling/blocked.hpp"

namespace fp8lab::gpu::scaling {
namespace {

using sim::scaling::QuantizeKind;
using sim::scaling::QuantizePlan;

// on_host: the host twins over host pointers; else the kernels on `stream`.
void execute(const QuantizePlan& p, const float* x, std::int64_t rows, std::int64_t cols,
             const BlockedOutputs& o, bool on_host, cudaStream_t stream) {
  namespace twin = host_twin;
  const bool rowwise = p.axis == sim::scaling::ScaleAxis::kRowwise;
  const sim::scaling::BlockShape b = p.blocks(rows, cols);
  // Block scaling's value_for_inf for fp32 input (sim::scaling::block_value_for_inf(FP32)).
  const float value_for_inf = FLT_MAX;
  switch (p.kind) {
    case QuantizeKind::kCurrentTe:
      return on_host ? twin::quantize_current_te(x, rows, cols, p.format, p.pow2, 0.0f, o)
                     : quantize_current_te(x, rows, cols, p.format, p.pow2, 0.0f, o, stream);
    case QuantizeKind::kTensorwiseTorchao:
      return on_host ? twin::quantize_tensorwise_torchao(x, rows, cols, p.format, p.pow2, o)
                     : quantize_tensorwise_torchao(x, rows, cols, p.format, p.pow2, o, stream);
    case QuantizeKind::kAxiswiseTorchao:
      return on_host
                 ? twin::quantize_axiswise_torchao(x, rows, cols, rowwise, p.format, p.pow2, o)
                 : quantize_axiswise_torchao(x, rows, cols, rowwise, p.format, p.pow2, o, stream);
    case QuantizeKind::kBlockTe:
      return on_host ? twin::quantize_block_te(x, rows, cols, b.rows, b.cols, p.format, p.pow2,
                                               0.0f, value_for_inf, o)
                     : quantize_block_te(x, rows, cols, b.rows, b.cols, p.format, p.pow2, 0.0f,
                                         value_for_inf, o, stream);
    case QuantizeKind::kMx:
      // MXFP4 / MXFP6 have kernels (gpu/scaling/fp4.hpp) whose outputs BlockedOutputs cannot hold
      // yet (no statistics); docs/fp4.md.
      if (sim::is_subbyte(p.format)) break;
      return on_host ? twin::quantize_mx(x, rows, cols, b.rows, b.cols, p.format, p.mx_mode,
                                         p.torchao, o)
                     : quantize_mx(x, rows, cols, b.rows, b.cols, p.format, p.mx_mode, p.torchao, o,
                                   stream);
    case QuantizeKind::kStatic:
      return on_host ? twin::quantize_static(x, rows, cols, p.format, p.static_scale, o)
                     : quantize_static(x, rows, cols, p.format, p.static_scale, o, stream);
    case QuantizeKind::kNvfp4:  // kernels in gpu/scaling/fp4.hpp, not behind a plan yet
    case QuantizeKind::kDelayed:
    case QuantizeKind::kHighPrecision: break;
  }
  throw std::invalid_argument(
      std::string("gpu::scaling::quantize: a ") + sim::scaling::to_string(p.kind) +
      " plan with format " + sim::spec(p.format).name +
      " has no stateless GPU quantizer behind a plan (NVFP4, MXFP4 and MXFP6: "
      "gpu/scaling/fp4.hpp's kernels, called directly)");
}

}  // namespace

void quantize(const QuantizePlan& plan, const float* x, std::int64_t rows, std::int64_t cols,
              const BlockedOutputs& out, cudaStream_t stream) {
  execute(plan, x, rows, cols, out, false, stream);
}

void host_twin::quantize(const QuantizePlan& plan, const float* x, std::int64_t rows,
                         std::int64_t cols, const BlockedOutputs& out) {
  execute(plan, x, rows, cols, out, true, nullptr);
}

}  // namespace fp8lab::gpu::scaling
