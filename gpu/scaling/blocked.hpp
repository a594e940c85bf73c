// Quantizers with one scale per block on the GPU (docs/numerics.md §2.2-2.5), twins of sim/scaling/:
//
//   gpu::scaling::quantize_block_te         must equal sim::scaling::quantize_block_te
//   gpu::scaling::quantize_axiswise_torchao must equal sim::scaling::quantize_axiswise_torchao
//   gpu::scaling::quantize_mx               must equal sim::scaling::quantize_mx / quantize_mx_2d
//   gpu::scaling::quantize_current_te       must equal sim::scaling::quantize_current_te
//   gpu::scaling::quantize_tensorwise_torchao must equal sim::scaling::quantize_tensorwise_torchao
//   gpu::scaling::quantize_static       must equal sim::scaling::quantize(plan) for kStatic
//                                       (quantize_per_tensor with plan.static_scale)
//
// Contract per block (sim/scaling/blocked.hpp): amax = max |x| (NaN ignored), has_nan; the rule
// gives {scale, scale_inv, e8m0}; q = cast_satfinite(RN(x * scale)). Statistics as sim's.
// x is fp32 row-major [rows, cols]; partial edge blocks hold their valid elements only. Outputs
// are device pointers: codes [rows * cols]; scale_inv, scale and e8m0 [ceil(rows/br) *
// ceil(cols/bc)] row-major (scale, e8m0, amax and stats may be null).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/quantize.hpp"
#include "sim/format.hpp"
#include "sim/scaling/plan.hpp"
#include "sim/settings.hpp"

namespace fp8lab::gpu::scaling {

// The MX settings are sim's own types (sim/settings.hpp), imported by name, not copied.
using sim::scaling::E8M0Mode;
using sim::scaling::TorchaoVersion;

struct BlockedOutputs {
  std::uint8_t* codes = nullptr;
  float* scale_inv = nullptr;
  float* scale = nullptr;                // the multipliers, as QuantizedTensor::scale
  std::uint8_t* e8m0 = nullptr;          // MX only
  DeviceQuantizeStats* stats = nullptr;  // accumulated
};

// TE Float8BlockScaling: s = te_scale_from_amax(amax, fp8_max, pow2, eps, value_for_inf), where
// value_for_inf = the input dtype's max finite (sim::scaling::block_value_for_inf).
void quantize_block_te(const float* x, std::int64_t rows, std::int64_t cols,
                       std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                       bool pow2, float eps, float value_for_inf, const BlockedOutputs& out,
                       cudaStream_t stream = nullptr);

// torchao axiswise: blocks 1 x cols (rowwise) or rows x 1; amax NaN-propagating,
// s = torchao_scale_from_amax(amax, fp8_max, pow2).
void quantize_axiswise_torchao(const float* x, std::int64_t rows, std::int64_t cols, bool rowwise,
                               sim::Format format, bool pow2, const BlockedOutputs& out,
                               cudaStream_t stream = nullptr);

// MXFP8: blocks 1x32 (rowwise copy), 32x1 (columnwise copy) or 32x32 (2-D weights); the torchao
// version applies to the torchao modes only (sim/settings.hpp).
void quantize_mx(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                 std::int64_t block_cols, sim::Format format, E8M0Mode mode, TorchaoVersion torchao,
                 const BlockedOutputs& out, cudaStream_t stream = nullptr);

// Per-tensor current scaling: amax over all of x, the rule, then gpu::quantize with that scale
// (three stream-ordered launches, no host synchronization). out.scale_inv / out.scale hold 1 value.
void quantize_current_te(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                         bool pow2, float eps, const BlockedOutputs& out,
                         cudaStream_t stream = nullptr);
void quantize_tensorwise_torchao(const float* x, std::int64_t rows, std::int64_t cols,
                                 sim::Format format, bool pow2, const BlockedOutputs& out,
                                 cudaStream_t stream = nullptr);
// Static scaling: the fixed multiplier `scale` (a positive finite fp32; std::invalid_argument
// otherwise), no amax read to choose it; scale_inv = RN(1 / scale). Two stream-ordered launches
// (the scale written to device memory, then gpu::quantize reading it), no host synchronization.
// out.scale_inv / out.scale hold 1 value.
void quantize_static(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                     float scale, const BlockedOutputs& out, cudaStream_t stream = nullptr);

// Executes a QuantizePlan (sim/scaling/plan.hpp): the quantizer above it names, with its format,
// blocks (plan.blocks(rows, cols)), axis, pow2 and MX mode and version; block scaling with fp32
// input (value_for_inf = FLT_MAX) and amax_epsilon 0. Must equal sim::scaling::quantize(plan, x).
// kStatic runs quantize_static with plan.static_scale. Throws std::invalid_argument for kDelayed
// (stateful; the caller runs gpu::quantize with the slot's scale) and kHighPrecision.
void quantize(const sim::scaling::QuantizePlan& plan, const float* x, std::int64_t rows,
              std::int64_t cols, const BlockedOutputs& out, cudaStream_t stream = nullptr);

// The same quantizers on the host, over HOST pointers (x, every output, stats), running the
// kernels' per-element and per-block code (gpu/scaling/host_twin.cu): checks the rules and
// statistics against sim/ without a GPU.
namespace host_twin {
void quantize_block_te(const float* x, std::int64_t rows, std::int64_t cols,
                       std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                       bool pow2, float eps, float value_for_inf, const BlockedOutputs& out);
void quantize_axiswise_torchao(const float* x, std::int64_t rows, std::int64_t cols, bool rowwise,
                               sim::Format format, bool pow2, const BlockedOutputs& out);
void quantize_mx(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                 std::int64_t block_cols, sim::Format format, E8M0Mode mode, TorchaoVersion torchao,
                 const BlockedOutputs& out);
void quantize_current_te(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                         bool pow2, float eps, const BlockedOutputs& out);
void quantize_tensorwise_torchao(const float* x, std::int64_t rows, std::int64_t cols,
                                 sim::Format format, bool pow2, const BlockedOutputs& out);
void quantize_static(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                     float scale, const BlockedOutputs& out);
void quantize(const sim::scaling::QuantizePlan& plan, const float* x, std::int64_t rows,
              std::int64_t cols, const BlockedOutputs& out);
}  // namespace host_twin

}  // namespace fp8lab::gpu::scaling
