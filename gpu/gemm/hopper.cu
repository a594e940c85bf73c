// The Hopper wgmma FP8 accumulation model as a deterministic CUDA kernel (gpu/gemm/gemm.hpp;
// sim/gemm/gemm.hpp "P_j by model"; tensorcore-and-papers.md §0, §1.6). One thread per output,
// walking its K-blocks and 32-element groups in sim's order. Per group, with c the e8m13
// accumulator:
//   1. mx = max(2^(e_a + e_b) over nonzero finite products, 2^e_c if c is finite and nonzero)
//   2. scale = 2^13 / mx (exact; 1 when mx = 0); every term x (a*b exact in fp32, and c) becomes
//      trunc(x * scale): x * scale is exact, truncf rounds toward zero onto the grid 2^(E-13)
//   3. the truncated terms are integers below 2^15 in magnitude; 33 of them sum below 2^24, so
//      the fp32 sum is exact (Inf/NaN terms give what the float64 sum gives)
//   4. V = sum * (1 / scale) (exact); clearing the low 10 mantissa bits truncates V to 13 fraction
//      bits (e8m13); V + 0 turns -0 into +0; NaN becomes 0x7FFFFFFF
//   promotion: P = RN(P + c), c = +0 after a group ending a multiple of 128 past the block start
//   (split accumulator) and after the block's last group.
// Speed is not this kernel's goal (fp32_seq.cu is the tiled one); exactness is.
#include "gpu/cuda_check.hpp"
#include "gpu/gemm/gemm_common.cuh"
#include "gpu/gemm/kernels.hpp"
#include "sim/format.hpp"

namespace fp8lab::gpu::gemm_detail {
namespace {

constexpr int kTile = 16;
constexpr int kGroupK = 32;        // sim::kHopperGroupK: elements per wgmma along K
constexpr int kPromotionK = 128;   // sim::kHopperPromotionK: CUTLASS mma_promotion_interval 4
constexpr int kFractionBits = 13;  // sim::kHopperFractionBits: e8m13

__global__ void __launch_bounds__(kTile * kTile)
    hopper_kernel(const Problem p, bool split_accumulator) {
  __shared__ float value_a[256], value_b[256], power_a[256], power_b[256];
  const int t = threadIdx.y * kTile + threadIdx.x;
  value_a[t] = decode_any(t, p.a.format);
  value_b[t] = decode_any(t, p.b.format);
  power_a[t] = exponent_power_any(t, p.a.format);
  power_b[t] = exponent_power_any(t, p.b.format);
  __syncthreads();
  const std::int64_t m = static_cast<std::int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (m >= p.m || n >= p.n) return;
  const float two_pow_frac = static_cast<float>(1 << kFractionBits);
  const std::uint32_t e8m13_mask = ~((1u << (23 - kFractionBits)) - 1u);
  float total = 0.0f;
  for (std::int64_t k0 = 0, j = 0; k0 < p.k; k0 += p.g, ++j) {
    const std::int64_t k1 = k0 + p.g < p.k ? k0 + p.g : p.k;
    float partial = 0.0f, c = 0.0f;
    for (std::int64_t g0 = k0; g0 < k1; g0 += kGroupK) {
      const std::int64_t g1 = g0 + kGroupK < k1 ? g0 + kGroupK : k1;
      float mx = isfinite(c) ? __uint_as_float(__float_as_uint(c) & 0x7F80'0000u) : 0.0f;
      for (std::int64_t k = g0; k < g1; ++k) {
        const std::uint8_t ca = p.a.codes[element_index(p.a, m, k)];
        const std::uint8_t cb = p.b.codes[element_index(p.b, n, k)];
        mx = fmaxf(mx, __fmul_rn(power_a[ca], power_b[cb]));
      }
      const float scale = mx == 0.0f ? 1.0f : __fdiv_rn(two_pow_frac, mx);
      float sum = truncf(__fmul_rn(c, scale));
      for (std::int64_t k = g0; k < g1; ++k) {
        const std::uint8_t ca = p.a.codes[element_index(p.a, m, k)];
        const std::uint8_t cb = p.b.codes[element_index(p.b, n, k)];
        sum = __fadd_rn(sum, truncf(__fmul_rn(__fmul_rn(value_a[ca], value_b[cb]), scale)));
      }
      const float value = __fmul_rn(sum, __fdiv_rn(1.0f, scale));
      const float result = __fadd_rn(__uint_as_float(__float_as_uint(value) & e8m13_mask), 0.0f);
      c = isnan(result) ? __uint_as_float(0x7FFF'FFFFu) : result;
      if ((split_accumulator && (g1 - k0) % kPromotionK == 0) || g1 == k1) {
        partial = __fadd_rn(partial, c);
        c = 0.0f;
      }
    }
    total = add_block(total, j == 0, partial, scale_at(p.a, m, k0), scale_at(p.b, n, k0));
  }
  p.out[m * p.n + n] = finish(total, n, p.options);
}

}  // namespace

void launch_hopper(const Problem& p, bool split_accumulator, cudaStream_t stream) {
  const dim3 blocks(static_cast<unsigned>((p.n + kTile - 1) / kTile),
                    static_cast<unsigned>((p.m + kTile - 1) / kTile));
  hopper_kernel<<<blocks, dim3(kTile, kTile), 0, stream>>>(p, split_accumulator);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace fp8lab::gpu::gemm_detail
