// Block-scaled quantizers (gpu/scaling/blocked.hpp). Row blocks 1x32 and 1x128 that tile every
// row (the MXFP8 rowwise and TE 1x128 layouts) run row_blocks_kernel below. Every other shape runs
// blocked_kernel: one warp per scale block, eight per thread block, grid-stride over the blocks.
// Pass 1: each lane folds max |x| and NaN presence over its share of the block, a butterfly leaves
// the block's values in every lane, and every lane derives the same scale from the rule; lane 0
// stores it. Pass 2: q = cast_satfinite(RN(x * s)) with the statistics of gpu::quantize (x the
// input, y = RN(x * s)), which equal sim's blocked counts.
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"
#include "gpu/scaling/block_rules.cuh"
#include "gpu/scaling/blocked.hpp"

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
    for (std::uint32_t e = static_cast<std::uint32_t>(lane); e < count; e += 32)
      f(e / width, e % width);
  } else {
    for (std::int64_t e = lane; e < nr * nc; e += 32) f(e / nc, e % nc);
  }
}

template <Format F, typename Rule>
__global__ void __launch_bounds__(kWarps * 32)
    blocked_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols,
                   std::int64_t br, std::int64_t bc, Rule rule, BlockedOutputs out) {
  const std::int64_t scale_cols = (cols + bc - 1) / bc;
  const std::int64_t blocks = ((rows + br - 1) / br) * scale_cols;
  const int lane = threadIdx.x & 31;
  detail::Counters c;
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
       b < blocks; b += static_cast<std::int64_t>(gridDim.x) * kWarps) {
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

// Row blocks 1 x bc (bc = 32 or 128) tiling every row (cols % bc == 0): the blocks are then
// consecutive runs of bc values in memory, block b holding x[b * bc .. b * bc + bc) and scale b.
// Per warp step, 512 values: kLanes = bc / 16 neighbouring lanes hold one block (1x128: 8 lanes,
// 1x32: 2), each lane kRowLoads = 4 16-byte loads of its block, all in flight before any
// arithmetic; load j of lane l takes the block's values j * 4 * kLanes + (l % kLanes) * 4 .. + 3
// (each load instruction reads whole 32-byte sectors). A lane folds max |x| and NaN presence over
// its 16 values, a butterfly over the block's lanes gives the block amax (NaN ignored by fmaxf),
// a ballot NaN presence; every lane derives the scale (once per 16 values), the block's first lane
// stores it, and the lane's codes take gpu::quantize's fast path (satfinite) when its largest value
// does (all_rn_in_range), else the per-element code, in four 4-byte stores.
constexpr int kRowLoads = 4;
constexpr int kRowStep = 32 * 4 * kRowLoads;  // values per warp step

template <Format F, int kLanes, typename Rule>
__global__ void __launch_bounds__(kWarps * 32)
    row_blocks_kernel(const float* __restrict__ x, std::int64_t n, Rule rule, BlockedOutputs out) {
  constexpr int kBlock = 16 * kLanes;
  constexpr std::uint32_t kSegmentMask = (1u << kLanes) - 1u;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int first_lane = lane & ~(kLanes - 1);
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  detail::Counters c;
  for (std::int64_t step = warp * kRowStep; step < n; step += warps * kRowStep) {
    // n % bc == 0: the lane's block is whole or wholly past the end.
    const std::int64_t block_first = step + (lane / kLanes) * kBlock;
    const bool valid = block_first < n;
    const std::int64_t first = block_first + (lane % kLanes) * 4;
    float4 v[kRowLoads];
#pragma unroll
    for (int j = 0; j < kRowLoads; ++j) {
      v[j] = valid ? *reinterpret_cast<const float4*>(x + first + j * 4 * kLanes)
                   : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    float lane_amax = 0.0f;
    bool nan = false;
#pragma unroll
    for (int j = 0; j < kRowLoads; ++j) {
      lane_amax = fmaxf(lane_amax, fmaxf(fmaxf(fabsf(v[j].x), fabsf(v[j].y)),
                                         fmaxf(fabsf(v[j].z), fabsf(v[j].w))));
      nan |= isnan(v[j].x) || isnan(v[j].y) || isnan(v[j].z) || isnan(v[j].w);
    }
    float amax = lane_amax;
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFF'FFFFu, amax, offset));
    }
    const bool has_nan = ((__ballot_sync(0xFFFF'FFFFu, nan) >> first_lane) & kSegmentMask) != 0;
    if (!valid) continue;
    const BlockScale s = rule.template operator()<F>(amax, has_nan);
    if (lane == first_lane) {
      const std::int64_t b = block_first / kBlock;
      out.scale_inv[b] = s.scale_inv;
      if (out.scale != nullptr) out.scale[b] = s.scale;
      if (out.e8m0 != nullptr) out.e8m0[b] = s.e8m0;
    }
    // The lane's 16 values take the fast path together when the largest does (all_rn_in_range);
    // amax is folded once (the fallback's Counters::add folds it again: max is idempotent).
    const bool in_range = detail::all_rn_in_range<F>(lane_amax, nan, s.scale);
    c.amax = detail::amax_update(c.amax, lane_amax);
#pragma unroll
    for (int j = 0; j < kRowLoads; ++j) {
      const float x4[4] = {v[j].x, v[j].y, v[j].z, v[j].w};
      const std::uint32_t word =
          in_range ? detail::quantize_rn_four_in_range<F, false>(x4, s.scale, c)
                   : detail::quantize_rn_two<F, Overflow::kSatFinite>(x4[0], x4[1], s.scale, c) |
                         (detail::quantize_rn_two<F, Overflow::kSatFinite>(x4[2], x4[3], s.scale, c)
                          << 16);
      *reinterpret_cast<std::uint32_t*>(out.codes + first + j * 4 * kLanes) = word;
    }
  }
  detail::flush_counters(c, nullptr, out.stats);
  if (out.stats != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
    atomicAdd(&out.stats->count, static_cast<unsigned long long>(n));
  }
}

void check(const char* function, const float* x, std::int64_t rows, std::int64_t cols,
           std::int64_t br, std::int64_t bc, sim::Format format, const BlockedOutputs& out) {
  detail::check_fp8(format, function);
  detail::check_blocked_shape(function, rows, cols, br, bc);
  if (x == nullptr || out.codes == nullptr || out.scale_inv == nullptr) {
    throw std::invalid_argument(
        std::string(function) +
        ": x, out.codes and out.scale_inv must be device pointers, got null");
  }
}

template <Format F, int kLanes, typename Rule>
void launch_row_blocks(const float* x, std::int64_t n, const Rule& rule, const BlockedOutputs& out,
                       cudaStream_t stream) {
  const auto kernel = row_blocks_kernel<F, kLanes, Rule>;
  static const int resident = detail::resident_blocks(kernel, kWarps * 32);
  const int grid = detail::grid_size((n + kRowStep - 1) / kRowStep * 32, kWarps * 32, resident);
  kernel<<<grid, kWarps * 32, 0, stream>>>(x, n, rule, out);
}

// Whether row_blocks_kernel applies: 1 x 32 or 1 x 128 blocks tiling every row, x 16-byte and the
// codes 4-byte aligned.
bool row_blocks_apply(const float* x, std::int64_t cols, std::int64_t br, std::int64_t bc,
                      const BlockedOutputs& out) {
  return br == 1 && (bc == 32 || bc == 128) && cols % bc == 0 &&
         reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(out.codes) % 4 == 0;
}

template <Format F, typename Rule>
void launch_format(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t br,
                   std::int64_t bc, const Rule& rule, const BlockedOutputs& out,
                   cudaStream_t stream) {
  if (row_blocks_apply(x, cols, br, bc, out)) {
    if (bc == 32) {
      launch_row_blocks<F, 2>(x, rows * cols, rule, out, stream);
    } else {
      launch_row_blocks<F, 8>(x, rows * cols, rule, out, stream);
    }
    return;
  }
  const std::int64_t blocks = ((rows + br - 1) / br) * ((cols + bc - 1) / bc);
  const int grid = detail::grid_size(blocks * 32, kWarps * 32);
  blocked_kernel<F><<<grid, kWarps * 32, 0, stream>>>(x, rows, cols, br, bc, rule, out);
}

template <typename Rule>
void launch(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t br, std::int64_t bc,
            sim::Format format, const Rule& rule, const BlockedOutputs& out, cudaStream_t stream) {
  if (format == Format::E4M3) {
    launch_format<Format::E4M3>(x, rows, cols, br, bc, rule, out, stream);
  } else {
    launch_format<Format::E5M2>(x, rows, cols, br, bc, rule, out, stream);
  }
  FP8LAB_CUDA_CHECK_LAUNCH();
}

float fp8_max(sim::Format format) { return static_cast<float>(sim::spec(format).max_finite()); }

}  // namespace

void quantize_block_te(const float* x, std::int64_t rows, std::int64_t cols,
                       std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                       bool pow2, float eps, float value_for_inf, const BlockedOutputs& out,
                       cudaStream_t stream) {
  check("gpu::scaling::quantize_block_te", x, rows, cols, block_rows, block_cols, format, out);
  launch(x, rows, cols, block_rows, block_cols, format,
         TeRule{fp8_max(format), eps, value_for_inf, pow2}, out, stream);
}

void quantize_axiswise_torchao(const float* x, std::int64_t rows, std::int64_t cols, bool rowwise,
                               sim::Format format, bool pow2, const BlockedOutputs& out,
                               cudaStream_t stream) {
  const std::int64_t br = rowwise ? 1 : rows, bc = rowwise ? cols : 1;
  check("gpu::scaling::quantize_axiswise_torchao", x, rows, cols, br, bc, format, out);
  launch(x, rows, cols, br, bc, format, TorchaoRule{fp8_max(format), pow2}, out, stream);
}

void quantize_mx(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                 std::int64_t block_cols, sim::Format format, E8M0Mode mode, TorchaoVersion torchao,
                 const BlockedOutputs& out, cudaStream_t stream) {
  check("gpu::scaling::quantize_mx", x, rows, cols, block_rows, block_cols, format, out);
  launch(x, rows, cols, block_rows, block_cols, format, MxRule{mode, torchao}, out, stream);
}

}  // namespace fp8lab::gpu::scaling
