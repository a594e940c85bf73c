// Block-scaled quantizers (gpu/scaling/blocked.hpp): one warp per scale block, eight per thread
// block, grid-stride over the blocks. Pass 1: each lane folds max |x| and NaN presence over its
// share of the block, a butterfly leaves the block's values in every lane, and every lane derives
// the same scale from the rule; lane 0 stores it. Pass 2: q = cast_satfinite(RN(x * s)) with the
// statistics of gpu::quantize (x the input, y = RN(x * s)), which equal sim's blocked counts.
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"
#include "gpu/scaling/blocked.hpp"
#include "gpu/scaling/block_rules.cuh"

namespace fp8lab::gpu::scaling {
namespace {

constexpr int kWarps = 8;

// Calls f(r, c) for every element of an nr x nc block, spread over the warp's lanes without
// 64-bit divisions: wide blocks walk rows with the lanes along a row (coalesced), single columns
// put the lanes on consecutive rows, other narrow blocks index with one 32-bit division.
template <typename F>
__device__ inline void for_each_in_block(std::int64_t nr, std::int64_t nc, int lane, F&& f) {
  if (nc >= 32) {
    for (std::int64_t r = 0; r < nr; ++r) {
      for (std::int64_t c = lane; c < nc; c += 32) f(r, c);
    }
  } else if (nc == 1) {
    for (std::int64_t r = lane; r < nr; r += 32) f(r, std::int64_t{0});
  } else if (nr * nc <= 0xFFFF'FFFFll) {
    const auto width = static_cast<std::uint32_t>(nc);
    const auto count = static_cast<std::uint32_t>(nr * nc);
    for (std::uint32_t e = static_cast<std::uint32_t>(lane); e < count; e += 32) f(e / width, e % width);
  } else {
    for (std::int64_t e = lane; e < nr * nc; e += 32) f(e / nc, e % nc);
  }
}

template <Format F, typename Rule>
__global__ void __launch_bounds__(kWarps * 32)
    blocked_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols, std::int64_t br,
                   std::int64_t bc, Rule rule, BlockedOutputs out) {
  const std::int64_t scale_cols = (cols + bc - 1) / bc;
  const std::int64_t blocks = ((rows + br - 1) / br) * scale_cols;
  const int lane = threadIdx.x & 31;
  detail::Counters c;
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; b < blocks;
       b += static_cast<std::int64_t>(gridDim.x) * kWarps) {
    const std::int64_t r0 = (b / scale_cols) * br, c0 = (b % scale_cols) * bc;
    const std::int64_t nr = r0 + br < rows ? br : rows - r0, nc = c0 + bc < cols ? bc : cols - c0;
    const float* block = x + r0 * cols + c0;
    float amax = 0.0f;
    bool has_nan = false;
    for_each_in_block(nr, nc, lane, [&](std::int64_t r, std::int64_t col) {
      const float v = block[r * cols + col];
      amax = fmaxf(amax, fabsf(v));
      has_nan |= isnan(v);
    });
    for (int offset = 16; offset > 0; offset /= 2) {
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    }
    has_nan = __any_sync(0xFFFFFFFFu, has_nan);
    const BlockScale s = rule.template operator()<F>(amax, has_nan);
    if (lane == 0) {
      out.scale_inv[b] = s.scale_inv;
      if (out.scale != nullptr) out.scale[b] = s.scale;
      if (out.e8m0 != nullptr) out.e8m0[b] = s.e8m0;
    }
    std::uint8_t* codes = out.codes + r0 * cols + c0;
    for_each_in_block(nr, nc, lane, [&](std::int64_t r, std::int64_t col) {
      const float v = block[r * cols + col];
      const float y = __fmul_rn(v, s.scale);
      const std::uint32_t code = cast_rn<F, Overflow::kSatFinite>(y);
      c.add<F>(v, y, code, Fp8<F>::rn_overflows(y));
      codes[r * cols + col] = static_cast<std::uint8_t>(code);
    });
  }
  detail::flush_counters(c, nullptr, out.stats);
  if (out.stats != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
    atomicAdd(&out.stats->count, static_cast<unsigned long long>(rows * cols));
  }
}

void check(const char* function, const float* x, std::int64_t rows, std::int64_t cols,
           std::int64_t br, std::int64_t bc, sim::Format format, const BlockedOutputs& out) {
  detail::check_fp8(format, function);
  if (rows < 1 || cols < 1 || br < 1 || bc < 1) {
    throw std::invalid_argument(std::string(function) + ": rows, cols, block_rows, block_cols must be >= 1, got " +
                                std::to_string(rows) + ", " + std::to_string(cols) + ", " +
                                std::to_string(br) + ", " + std::to_string(bc));
  }
  if (x == nullptr || out.codes == nullptr || out.scale_inv == nullptr) {
    throw std::invalid_argument(std::string(function) + ": x, out.codes and out.scale_inv must be device pointers, got null");
  }
}

template <typename Rule>
void launch(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t br, std::int64_t bc,
            sim::Format format, const Rule& rule, const BlockedOutputs& out, cudaStream_t stream) {
  const std::int64_t blocks = ((rows + br - 1) / br) * ((cols + bc - 1) / bc);
  const int grid = detail::grid_size(blocks * 32, kWarps * 32);
  if (format == Format::E4M3) {
    blocked_kernel<Format::E4M3><<<grid, kWarps * 32, 0, stream>>>(x, rows, cols, br, bc, rule, out);
  } else {
    blocked_kernel<Format::E5M2><<<grid, kWarps * 32, 0, stream>>>(x, rows, cols, br, bc, rule, out);
  }
  FP8LAB_CUDA_CHECK_LAUNCH();
}

float fp8_max(sim::Format format) { return static_cast<float>(sim::spec(format).max_finite()); }

}  // namespace

void quantize_block_te(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                       std::int64_t block_cols, sim::Format format, bool pow2, float eps,
                       float value_for_inf, const BlockedOutputs& out, cudaStream_t stream) {
  check("gpu::scaling::quantize_block_te", x, rows, cols, block_rows, block_cols, format, out);
  launch(x, rows, cols, block_rows, block_cols, format, TeRule{fp8_max(format), eps, value_for_inf, pow2},
         out, stream);
}

void quantize_axiswise_torchao(const float* x, std::int64_t rows, std::int64_t cols, bool rowwise,
                               sim::Format format, bool pow2, const BlockedOutputs& out,
                               cudaStream_t stream) {
  const std::int64_t br = rowwise ? 1 : rows, bc = rowwise ? cols : 1;
  check("gpu::scaling::quantize_axiswise_torchao", x, rows, cols, br, bc, format, out);
  launch(x, rows, cols, br, bc, format, TorchaoRule{fp8_max(format), pow2}, out, stream);
}

void quantize_mx(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                 std::int64_t block_cols, sim::Format format, MxMode mode, const BlockedOutputs& out,
                 cudaStream_t stream) {
  check("gpu::scaling::quantize_mx", x, rows, cols, block_rows, block_cols, format, out);
  launch(x, rows, cols, block_rows, block_cols, format, MxRule{static_cast<E8M0Mode>(mode)}, out, stream);
}

}  // namespace fp8lab::gpu::scaling
