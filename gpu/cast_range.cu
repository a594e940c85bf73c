// The device casts over ranges of fp32 bit patterns (gpu/cast_api.hpp), for the exhaustive check
// against sim/ on all 2^32 inputs.
#include "gpu/cast.cuh"
#include "gpu/cast_api.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"
#include "sim/rng.hpp"

namespace fp8lab::gpu {
namespace {

constexpr int kThreads = 256;

template <Format F, Overflow M, bool kStochastic>
__global__ void __launch_bounds__(kThreads)
    cast_range_kernel(std::uint32_t first_bits, std::int64_t count, std::uint64_t seed,
                      std::uint8_t* __restrict__ codes) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const std::uint32_t bits = first_bits + static_cast<std::uint32_t>(i);
    const float y = __uint_as_float(bits);
    if constexpr (kStochastic) {
      codes[i] = cast_stochastic<F, M>(y, sim::philox_block_word(seed, 0, bits));
    } else {
      codes[i] = cast_rn<F, M>(y);
    }
  }
}

template <Format F>
__global__ void decode_all_kernel(float* values) {
  values[threadIdx.x] = decode<F>(threadIdx.x);
}

struct LaunchRange {
  std::uint32_t first_bits;
  std::int64_t count;
  bool stochastic;
  std::uint64_t seed;
  std::uint8_t* codes;
  cudaStream_t stream;
  template <Format F, Overflow M>
  void operator()() const {
    const int blocks = detail::grid_size(count, kThreads);
    if (stochastic) {
      cast_range_kernel<F, M, true>
          <<<blocks, kThreads, 0, stream>>>(first_bits, count, seed, codes);
    } else {
      cast_range_kernel<F, M, false>
          <<<blocks, kThreads, 0, stream>>>(first_bits, count, seed, codes);
    }
    FP8LAB_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

void cast_range(std::uint32_t first_bits, std::int64_t count, sim::Format format,
                sim::Overflow mode, bool stochastic, std::uint64_t seed, std::uint8_t* codes,
                cudaStream_t stream) {
  if (count <= 0) return;
  detail::dispatch_format_mode(format, mode, "gpu::cast_range",
                               LaunchRange{first_bits, count, stochastic, seed, codes, stream});
}

void decode_all(sim::Format format, float* values, cudaStream_t stream) {
  detail::check_fp8(format, "gpu::decode_all");
  if (format == Format::E4M3) {
    decode_all_kernel<Format::E4M3><<<1, 256, 0, stream>>>(values);
  } else {
    decode_all_kernel<Format::E5M2><<<1, 256, 0, stream>>>(values);
  }
  FP8LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace fp8lab::gpu
