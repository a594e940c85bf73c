// The Hopper wgmma FP8 accumulation model as a deterministic CUDA kernel (gpu/gemm/gemm.hpp;
// sim/gemm/gemm.hpp "P_j by model"; tensorcore-and-papers.md §0, §1.6): one thread per output
// runs gemm_detail::hopper_output (gpu/gemm/gemm_common.cuh, where the steps are spelled out),
// reading codes from global memory and the decode / exponent tables from shared memory.
// Speed is not this kernel's goal (fp32_seq.cu is the tiled one); exactness is.
#include "gpu/cuda_check.hpp"
#include "gpu/gemm/gemm_common.cuh"
#include "gpu/gemm/kernels.hpp"

namespace fp8lab::gpu::gemm_detail {
namespace {

constexpr int kTile = 16;

__global__ void __launch_bounds__(kTile* kTile)
    hopper_kernel(const __grid_constant__ Problem p, bool split_accumulator) {
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
  p.out[m * p.n + n] =
      hopper_output(p, {value_a, value_b, power_a, power_b}, m, n, split_accumulator);
}

}  // namespace

void launch_hopper(const Problem& p, bool split_accumulator, cudaStream_t stream) {
  const dim3 blocks(static_cast<unsigned>((p.n + kTile - 1) / kTile),
                    static_cast<unsigned>((p.m + kTile - 1) / kTile));
  hopper_kernel<<<blocks, dim3(kTile, kTile), 0, stream>>>(p, split_accumulator);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace fp8lab::gpu::gemm_detail
