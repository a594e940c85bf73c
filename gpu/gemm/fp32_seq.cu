// The fp32_seq order as a tiled CUDA kernel (gpu/gemm/gemm.hpp), for quantized operands (the
// fp32_seq model) and dense ones (the high-precision GEMM). For each output, acc = +0 then one
// step per k in increasing order within each K-block:
//   quantized: acc = fma(a_k, b_k, acc), which is RN(acc + a_k * b_k) because products of two FP8
//              values are exact in fp32 (sim/gemm/gemm.hpp);
//   dense:     acc = RN(acc + RN(a_k * b_k)), two roundings, as sim::high_precision_gemm.
// Each output is owned by one thread from the first k to the last, so no reduction order exists
// to vary. 128 x 128 outputs per block of 256 threads, 8 x 8 per thread, K in steps of 8 staged
// through shared memory (codes decoded through 256-entry tables; dense values optionally rounded
// to bf16). At each K-block end (uniform across the block) the thread folds acc into its total
// with the block's scales. gemm_common.cuh's fp32_seq_output / high_precision_output are the same
// order one output at a time, which the host twin runs.
#include "gpu/cuda_check.hpp"
#include "gpu/gemm/gemm_common.cuh"
#include "gpu/gemm/kernels.hpp"

namespace fp8lab::gpu::gemm_detail {
namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 256
static_assert(kBM == kBN && kBM * kBK == 4 * kThreads);

// Stages the [outer0, outer0 + 128) x [k0, k0 + 8) slice of an operand as tile[k][o]; elements
// outside the problem are +0 (products with them add +0 to an accumulator that is never -0, and
// only after the last K-block has been folded).
template <typename Value, typename Operand>
__device__ inline void stage(const Operand& op, std::int64_t outer_count, std::int64_t k_count,
                             std::int64_t outer0, std::int64_t k0, Value value,
                             float (*tile)[kBM]) {
  for (int e = threadIdx.x; e < kBM * kBK; e += kThreads) {
    // K-contiguous storage: consecutive threads walk k; otherwise they walk the outer dim.
    const int o = op.k_is_cols ? e / kBK : e % kBM;
    const int kk = op.k_is_cols ? e % kBK : e / kBM;
    const std::int64_t outer = outer0 + o, k = k0 + kk;
    tile[kk][o] = (outer < outer_count && k < k_count) ? value(outer, k) : 0.0f;
  }
}

template <bool kDense>
struct TiledProblem;
template <>
struct TiledProblem<false> {
  using Type = Problem;
};
template <>
struct TiledProblem<true> {
  using Type = DenseProblem;
};

template <bool kDense>
__global__ void __launch_bounds__(kThreads)
    tiled_kernel(const __grid_constant__ typename TiledProblem<kDense>::Type p) {
  __shared__ float table_a[256], table_b[256];
  __shared__ __align__(16) float tile_a[kBK][kBM];
  __shared__ __align__(16) float tile_b[kBK][kBN];
  if constexpr (!kDense) {
    table_a[threadIdx.x] = decode_any(threadIdx.x, p.a.format);
    table_b[threadIdx.x] = decode_any(threadIdx.x, p.b.format);
  }
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * kBM;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kBN;
  const int ty = threadIdx.x / (kBN / kTN), tx = threadIdx.x % (kBN / kTN);
  float acc[kTM][kTN], total[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = total[i][j] = 0.0f;
  }
  std::int64_t g = p.k;
  if constexpr (!kDense) g = p.g;
  std::int64_t block_start = 0, block_end = g < p.k ? g : p.k;
  bool first_block = true;
  for (std::int64_t k0 = 0; k0 < p.k; k0 += kBK) {
    __syncthreads();  // tables ready (first pass) / previous tile consumed
    if constexpr (kDense) {
      stage(
          p.a, p.m, p.k, m0, k0,
          [&](std::int64_t o, std::int64_t k) { return dense_value(p, p.a, o, k); }, tile_a);
      stage(
          p.b, p.n, p.k, n0, k0,
          [&](std::int64_t o, std::int64_t k) { return dense_value(p, p.b, o, k); }, tile_b);
    } else {
      stage(
          p.a, p.m, p.k, m0, k0,
          [&](std::int64_t o, std::int64_t k) {
            return table_a[p.a.codes[element_index(p.a, o, k)]];
          },
          tile_a);
      stage(
          p.b, p.n, p.k, n0, k0,
          [&](std::int64_t o, std::int64_t k) {
            return table_b[p.b.codes[element_index(p.b, o, k)]];
          },
          tile_b);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[kTM], b[kTN];
      const float4 a0 = *reinterpret_cast<const float4*>(&tile_a[kk][ty * kTM]);
      const float4 a1 = *reinterpret_cast<const float4*>(&tile_a[kk][ty * kTM + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&tile_b[kk][tx * kTN]);
      const float4 b1 = *reinterpret_cast<const float4*>(&tile_b[kk][tx * kTN + 4]);
      a[0] = a0.x;
      a[1] = a0.y;
      a[2] = a0.z;
      a[3] = a0.w;
      a[4] = a1.x;
      a[5] = a1.y;
      a[6] = a1.z;
      a[7] = a1.w;
      b[0] = b0.x;
      b[1] = b0.y;
      b[2] = b0.z;
      b[3] = b0.w;
      b[4] = b1.x;
      b[5] = b1.y;
      b[6] = b1.z;
      b[7] = b1.w;
#pragma unroll
      for (int i = 0; i < kTM; ++i) {
#pragma unroll
        for (int j = 0; j < kTN; ++j) {
          acc[i][j] = kDense ? add_rn(acc[i][j], mul_rn(a[i], b[j]))
                             : fma_rn(a[i], b[j], acc[i][j]);
        }
      }
      if (k0 + kk + 1 == block_end) {  // same k for every thread: a uniform branch
        float sa[kTM], sb[kTN];
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
          const std::int64_t m = m0 + ty * kTM + i;
          sa[i] = 1.0f;
          if constexpr (!kDense) sa[i] = m < p.m ? scale_at(p.a, m, block_start) : 1.0f;
        }
#pragma unroll
        for (int j = 0; j < kTN; ++j) {
          const std::int64_t n = n0 + tx * kTN + j;
          sb[j] = 1.0f;
          if constexpr (!kDense) sb[j] = n < p.n ? scale_at(p.b, n, block_start) : 1.0f;
        }
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
#pragma unroll
          for (int j = 0; j < kTN; ++j) {
            total[i][j] = add_block(total[i][j], first_block, acc[i][j], sa[i], sb[j]);
            acc[i][j] = 0.0f;
          }
        }
        first_block = false;
        block_start = block_end;
        block_end = block_end + g < p.k ? block_end + g : p.k;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const std::int64_t m = m0 + ty * kTM + i;
    if (m >= p.m) continue;
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const std::int64_t n = n0 + tx * kTN + j;
      if (n < p.n) p.out[m * p.n + n] = finish(total[i][j], n, p.options);
    }
  }
}

dim3 grid(std::int64_t m, std::int64_t n) {
  return dim3(static_cast<unsigned>((n + kBN - 1) / kBN),
              static_cast<unsigned>((m + kBM - 1) / kBM));
}

}  // namespace

void launch_fp32_seq(const Problem& p, cudaStream_t stream) {
  tiled_kernel<false><<<grid(p.m, p.n), kThreads, 0, stream>>>(p);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

void launch_high_precision(const DenseProblem& p, cudaStream_t stream) {
  tiled_kernel<true><<<grid(p.m, p.n), kThreads, 0, stream>>>(p);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace fp8lab::gpu::gemm_detail
