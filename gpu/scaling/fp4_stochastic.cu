// NVFP4 stochastic rounding kernel (gpu/scaling/fp4_stochastic.hpp): the RN quantizer's scales,
// then one thread per Philox word re-rounds four elements (fp4_stochastic.cuh), grid-stride.
#include "gpu/cuda_check.hpp"
#include "gpu/scaling/fp4_checks.hpp"
#include "gpu/scaling/fp4_stochastic.cuh"
#include "gpu/scaling/fp4_stochastic.hpp"

namespace fp8lab::gpu::scaling {
namespace {

constexpr int kThreads = 256;

// out.global holds {amax, encode, decode} from the RN pass, earlier on the same stream.
__global__ void __launch_bounds__(kThreads)
    nvfp4_stochastic_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols,
                            std::int64_t br, std::int64_t bc, std::uint64_t seed,
                            std::uint64_t stream, Fp4Outputs out) {
  const Nvfp4Global g{out.global[0], out.global[1], out.global[2]};
  const std::int64_t words = (rows * cols + 3) / 4;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    nvfp4_stochastic_word(x, rows, cols, br, bc, w, seed, stream, g, out.scale_bytes, out.codes);
  }
}

}  // namespace

void quantize_nvfp4_stochastic(const float* x, std::int64_t rows, std::int64_t cols,
                               std::int64_t block_rows, std::int64_t block_cols, std::uint64_t seed,
                               std::uint64_t stream, const Fp4Outputs& out,
                               cudaStream_t cuda_stream) {
  detail::check_fp4("gpu::scaling::quantize_nvfp4_stochastic", x, rows, cols, block_rows,
                    block_cols, Format::E2M1, out, true);
  quantize_nvfp4(x, rows, cols, block_rows, block_cols, Nvfp4Mode::kTe, out, cuda_stream);
  nvfp4_stochastic_kernel<<<gpu::detail::grid_size((rows * cols + 3) / 4, kThreads), kThreads, 0,
                            cuda_stream>>>(x, rows, cols, block_rows, block_cols, seed, stream,
                                           out);
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace fp8lab::gpu::scaling
