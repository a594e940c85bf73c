// Per-tensor current scaling (gpu/scaling/blocked.hpp): amax of the whole tensor (NaN ignored,
// and whether any NaN was seen), the recipe's rule on one thread, then gpu::quantize reading the
// scale from device memory. Stream-ordered; the scratch lives in stream-ordered memory.
// Static scaling (quantize_static) is the same without the amax pass: the plan's fixed scale
// written on one thread, then gpu::quantize.
#include <cfloat>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"
#include "gpu/scaling/blocked.hpp"
#include "gpu/scaling/rules.cuh"

namespace fp8lab::gpu::scaling {
namespace {

constexpr int kThreads = 256;

struct Scratch {
  float amax;
  std::uint32_t has_nan;
  float scale;
};

constexpr int kAmaxLoads = 4;                   // 16-byte loads per lane and step, all in flight
constexpr int kAmaxStep = 32 * 4 * kAmaxLoads;  // values per warp step

// max |x| (NaN ignored) and NaN presence of x[0..n). `head` values one by one (so that x + head
// is 16-byte aligned), then warp steps of 512 values (load j of lane l: values j * 128 + l * 4
// .. + 3 of the step, whole 512-byte runs per load instruction), then the tail one by one.
// One atomic per thread block and result.
__global__ void __launch_bounds__(kThreads)
    amax_kernel(const float* __restrict__ x, std::int64_t n, std::int64_t head, Scratch* scratch) {
  float amax = 0.0f;
  bool nan = false;
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const auto fold = [&](float v) {
    amax = fmaxf(amax, fabsf(v));
    nan |= isnan(v);
  };
  for (std::int64_t i = thread; i < head; i += threads) fold(x[i]);
  const std::int64_t steps = (n - head) / kAmaxStep;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (std::int64_t step = thread / 32; step < steps; step += threads / 32) {
    const float* p = x + head + step * kAmaxStep + lane * 4;
    float4 v[kAmaxLoads];
#pragma unroll
    for (int j = 0; j < kAmaxLoads; ++j) v[j] = *reinterpret_cast<const float4*>(p + j * 128);
#pragma unroll
    for (int j = 0; j < kAmaxLoads; ++j) {
      fold(v[j].x);
      fold(v[j].y);
      fold(v[j].z);
      fold(v[j].w);
    }
  }
  for (std::int64_t i = head + steps * kAmaxStep + thread; i < n; i += threads) fold(x[i]);
  __shared__ float warp_amax[kThreads / 32];
  __shared__ bool warp_nan[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
  }
  nan = __any_sync(0xFFFFFFFFu, nan);
  if (lane == 0) {
    warp_amax[threadIdx.x / 32] = amax;
    warp_nan[threadIdx.x / 32] = nan;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kThreads / 32; ++w) {
    amax = fmaxf(amax, warp_amax[w]);
    nan |= warp_nan[w];
  }
  if (amax > 0.0f) detail::atomic_max_nonnegative(&scratch->amax, amax);
  if (nan) atomicOr(&scratch->has_nan, 1u);
}

// torchao: NaN-propagating amax; TE: NaN ignored, value_for_inf = FLT_MAX.
__global__ void rule_kernel(Scratch* scratch, bool torchao, float fp8_max, bool pow2, float eps,
                            float* scale_inv, float* scale) {
  const float amax = (torchao && scratch->has_nan != 0) ? __uint_as_float(0x7FC0'0000u)
                                                        : scratch->amax;
  const float s = torchao ? torchao_scale_from_amax(amax, fp8_max, pow2)
                          : te_scale_from_amax(amax, fp8_max, pow2, eps, FLT_MAX);
  scratch->scale = s;
  *scale_inv = canonical_nan(__fdiv_rn(1.0f, s));
  if (scale != nullptr) *scale = s;
}

// Static scaling: the fixed multiplier where gpu::quantize reads it, and in out.scale.
__global__ void static_scale_kernel(float s, Scratch* scratch, float* scale) {
  scratch->scale = s;
  if (scale != nullptr) *scale = s;
}

// The checks current scaling and static scaling share: an FP8 format, a shape, device pointers.
// Returns the element count.
std::int64_t checked_count(const char* function, const float* x, std::int64_t rows,
                           std::int64_t cols, sim::Format format, const BlockedOutputs& out) {
  detail::check_fp8(format, function);
  const std::int64_t n = detail::check_blocked_shape(function, rows, cols, rows, cols);
  if (x == nullptr || out.codes == nullptr || out.scale_inv == nullptr) {
    throw std::invalid_argument(
        std::string(function) +
        ": x, out.codes and out.scale_inv must be device pointers, got null");
  }
  return n;
}

void current(const char* function, const float* x, std::int64_t rows, std::int64_t cols,
             sim::Format format, bool torchao, bool pow2, float eps, const BlockedOutputs& out,
             cudaStream_t stream) {
  const std::int64_t n = checked_count(function, x, rows, cols, format, out);
  Scratch* scratch = nullptr;
  FP8LAB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), sizeof(Scratch), stream));
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(scratch, 0, sizeof(Scratch), stream));
  std::int64_t head = 0;  // values before the first 16-byte boundary (fp32 x is 4-byte aligned)
  while (head < n && (reinterpret_cast<std::uintptr_t>(x + head) % 16) != 0) ++head;
  static const int resident = detail::resident_blocks(amax_kernel, kThreads);
  const std::int64_t work = (n - head) / kAmaxStep * 32 + head + (n - head) % kAmaxStep;
  amax_kernel<<<detail::grid_size(work, kThreads, resident), kThreads, 0, stream>>>(x, n, head,
                                                                                    scratch);
  FP8LAB_CUDA_CHECK_LAUNCH();
  rule_kernel<<<1, 1, 0, stream>>>(scratch, torchao,
                                   static_cast<float>(sim::spec(format).max_finite()), pow2, eps,
                                   out.scale_inv, out.scale);
  FP8LAB_CUDA_CHECK_LAUNCH();
  QuantizeOutputs q;
  q.codes = out.codes;
  q.stats = out.stats;
  quantize(x, n, &scratch->scale, format, Overflow::kSatFinite, q, stream);
  FP8LAB_CUDA_CHECK(cudaFreeAsync(scratch, stream));
}

}  // namespace

void quantize_static(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                     float scale, const BlockedOutputs& out, cudaStream_t stream) {
  const char* function = "gpu::scaling::quantize_static";
  detail::check_static_scale(function, scale);
  const std::int64_t n = checked_count(function, x, rows, cols, format, out);
  Scratch* scratch = nullptr;
  FP8LAB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), sizeof(Scratch), stream));
  static_scale_kernel<<<1, 1, 0, stream>>>(scale, scratch, out.scale);
  FP8LAB_CUDA_CHECK_LAUNCH();
  QuantizeOutputs q;
  q.codes = out.codes;
  q.stats = out.stats;
  q.scale_inv = out.scale_inv;  // RN(1 / scale), finish_per_tensor
  quantize(x, n, &scratch->scale, format, Overflow::kSatFinite, q, stream);
  FP8LAB_CUDA_CHECK(cudaFreeAsync(scratch, stream));
}

void quantize_current_te(const float* x, std::int64_t rows, std::int64_t cols, sim::Format format,
                         bool pow2, float eps, const BlockedOutputs& out, cudaStream_t stream) {
  current("gpu::scaling::quantize_current_te", x, rows, cols, format, false, pow2, eps, out,
          stream);
}

void quantize_tensorwise_torchao(const float* x, std::int64_t rows, std::int64_t cols,
                                 sim::Format format, bool pow2, const BlockedOutputs& out,
                                 cudaStream_t stream) {
  current("gpu::scaling::quantize_tensorwise_torchao", x, rows, cols, format, true, pow2, 0.0f, out,
          stream);
}

}  // namespace fp8lab::gpu::scaling
