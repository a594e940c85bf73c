// FP4/FP6 quantizer and RHT kernels (gpu/scaling/fp4.hpp): one thread per scale block or RHT chunk,
// grid-stride, running fp4_rules.cuh's per-block code, which the host twins run too.
#include <stdexcept>

#include "gpu/cuda_check.hpp"
#include "gpu/scaling/fp4.hpp"
#include "gpu/scaling/fp4_checks.hpp"

namespace fp8lab::gpu {
namespace scaling {
namespace {

constexpr int kThreads = 256;

FP8LAB_HD std::int64_t block_count(std::int64_t rows, std::int64_t cols, std::int64_t br,
                                   std::int64_t bc) {
  return ((rows + br - 1) / br) * ((cols + bc - 1) / bc);
}

template <Format F>
__global__ void __launch_bounds__(kThreads)
    mx_subbyte_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols,
                      std::int64_t br, std::int64_t bc, E8M0Mode mode, TorchaoVersion torchao,
                      Fp4Outputs out) {
  const std::int64_t blocks = block_count(rows, cols, br, bc);
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       b < blocks; b += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    mx_subbyte_block<F>(x, rows, cols, br, bc, b, mode, torchao, out);
  }
}

// Pass 1: the tensor amax as fp32 bits (out.global[0], zeroed first), atomicMax per warp.
__global__ void __launch_bounds__(kThreads)
    nvfp4_amax_kernel(const float* __restrict__ x, std::int64_t n, Nvfp4Mode mode,
                      std::uint32_t* amax_bits) {
  std::uint32_t m = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t v = nvfp4_amax_bits(x[i], mode);
    m = v > m ? v : m;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const std::uint32_t o = __shfl_xor_sync(0xFFFF'FFFFu, m, offset);
    m = o > m ? o : m;
  }
  if ((threadIdx.x & 31u) == 0 && m != 0) atomicMax(amax_bits, m);
}

// Pass 2: every thread derives the global scale from the amax; thread 0 stores encode, decode.
__global__ void __launch_bounds__(kThreads)
    nvfp4_blocks_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols,
                        std::int64_t br, std::int64_t bc, Nvfp4Mode mode, Fp4Outputs out) {
  const Nvfp4Global g = nvfp4_global(out.global[0], mode);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    out.global[1] = g.encode;
    out.global[2] = g.decode;
  }
  const std::int64_t blocks = block_count(rows, cols, br, bc);
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       b < blocks; b += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    nvfp4_block(x, rows, cols, br, bc, b, g, mode, out);
  }
}

}  // namespace

void quantize_mx_subbyte(const float* x, std::int64_t rows, std::int64_t cols,
                         std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                         E8M0Mode mode, TorchaoVersion torchao, const Fp4Outputs& out,
                         cudaStream_t stream) {
  detail::check_fp4("gpu::scaling::quantize_mx_subbyte", x, rows, cols, block_rows, block_cols,
                    format, out, false);
  const int grid =
      gpu::detail::grid_size(block_count(rows, cols, block_rows, block_cols), kThreads);
  switch (format) {
    case Format::E2M1:
      mx_subbyte_kernel<Format::E2M1><<<grid, kThreads, 0, stream>>>(
          x, rows, cols, block_rows, block_cols, mode, torchao, out);
      break;
    case Format::E2M3:
      mx_subbyte_kernel<Format::E2M3><<<grid, kThreads, 0, stream>>>(
          x, rows, cols, block_rows, block_cols, mode, torchao, out);
      break;
    default:
      mx_subbyte_kernel<Format::E3M2><<<grid, kThreads, 0, stream>>>(
          x, rows, cols, block_rows, block_cols, mode, torchao, out);
  }
  FP8LAB_CUDA_CHECK_LAUNCH();
}

void quantize_nvfp4(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                    std::int64_t block_cols, Nvfp4Mode mode, const Fp4Outputs& out,
                    cudaStream_t stream) {
  detail::check_fp4("gpu::scaling::quantize_nvfp4", x, rows, cols, block_rows, block_cols,
                    Format::E2M1, out, true);
  if (mode == Nvfp4Mode::kTorchaoTraining) {
    throw std::invalid_argument(
        "gpu::scaling::quantize_nvfp4: nvfp4 mode torchao_training has no kernel here (sim only)");
  }
  auto* amax_bits = reinterpret_cast<std::uint32_t*>(out.global);
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(amax_bits, 0, sizeof(std::uint32_t), stream));
  nvfp4_amax_kernel<<<gpu::detail::grid_size(rows * cols, kThreads), kThreads, 0, stream>>>(
      x, rows * cols, mode, amax_bits);
  FP8LAB_CUDA_CHECK_LAUNCH();
  const int grid =
      gpu::detail::grid_size(block_count(rows, cols, block_rows, block_cols), kThreads);
  nvfp4_blocks_kernel<<<grid, kThreads, 0, stream>>>(x, rows, cols, block_rows, block_cols, mode,
                                                     out);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace scaling

namespace {

__global__ void __launch_bounds__(scaling::kRhtSize * 16)
    rht_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols,
               bool chunks_down_rows, std::uint32_t sign_mask, float* __restrict__ y) {
  const std::int64_t chunked = chunks_down_rows ? rows : cols;
  const std::int64_t outer = chunks_down_rows ? cols : rows;
  const std::int64_t per_outer = chunked / scaling::kRhtSize;
  const std::int64_t chunks = outer * per_outer;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < chunks; k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t o = k / per_outer, c0 = (k % per_outer) * scaling::kRhtSize;
    float in[scaling::kRhtSize], out[scaling::kRhtSize];
    for (int i = 0; i < scaling::kRhtSize; ++i) {
      in[i] = x[scaling::detail::rht_index(o, c0, i, cols, chunks_down_rows)];
    }
    scaling::rht_chunk_bf16(in, sign_mask, out);
    for (int i = 0; i < scaling::kRhtSize; ++i) {
      y[scaling::detail::rht_index(o, c0, i, cols, chunks_down_rows)] = out[i];
    }
  }
}

}  // namespace

void random_hadamard_transform_bf16(const float* x, std::int64_t rows, std::int64_t cols,
                                    bool chunks_down_rows, std::uint16_t sign_mask, float* y,
                                    cudaStream_t stream) {
  scaling::detail::check_rht("gpu::random_hadamard_transform_bf16", x, rows, cols, chunks_down_rows,
                             y);
  constexpr int kThreadsRht = scaling::kRhtSize * 16;
  const int grid = detail::grid_size(rows * cols / scaling::kRhtSize, kThreadsRht);
  rht_kernel<<<grid, kThreadsRht, 0, stream>>>(x, rows, cols, chunks_down_rows, sign_mask, y);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace fp8lab::gpu
