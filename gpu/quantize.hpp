// Bulk quantize on the GPU, the twin of sim/quantize.hpp (docs/numerics.md §1-2, §4): codes
// q[i] = cast(RN(x[i] * scale)) fused with amax of the unscaled input (NaN ignored, fmaxf) and the
// statistics of sim::QuantizeStats. Host API over device pointers and a stream; no LibTorch.
//
//   gpu::quantize             must equal sim::quantize
//   gpu::quantize_bf16        must equal sim::quantize_bf16
//   gpu::quantize_stochastic  must equal sim::quantize_stochastic (same Philox words, sim/rng.hpp)
//   gpu::quantize_transpose   must equal sim::quantize, plus the same codes transposed
//
// The scale is read from device memory (TE: kernels read the scale the recipe wrote), so a
// delayed-scaling step needs no host round trip.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "sim/cast.hpp"  // Format, Overflow (declarations only)

namespace fp8lab::gpu {

// Statistics in device memory, accumulated with atomics across calls (zero it to start over).
// Fields mean what sim::QuantizeStats's fields mean.
struct DeviceQuantizeStats {
  float amax;              // max |x| over non-NaN x; +Inf if any x is ±Inf
  std::uint32_t reserved;  // keeps the counters 8-byte aligned
  unsigned long long count;
  unsigned long long saturated;
  unsigned long long underflowed;
  unsigned long long nan;
};

// Where a quantize call writes. `codes` is required; the others may be null.
struct QuantizeOutputs {
  std::uint8_t* codes = nullptr;  // n codes, same order as x
  float* amax = nullptr;          // fmax-accumulated max |x| (delayed scaling: history row 0)
  DeviceQuantizeStats* stats = nullptr;  // accumulated statistics
  float* scale_inv = nullptr;            // RN(1 / scale), the tensor's dequantization factor
};

// The random stream of a stochastic quantize: element i draws
// sim::philox_block_word(seed, stream, first_index + i) (one Philox block per four elements).
struct StochasticStream {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
  std::uint64_t first_index = 0;
};

// Throws std::invalid_argument for a format other than E4M3/E5M2 or a null codes pointer;
// launches asynchronously on `stream` otherwise.
void quantize(const float* x, std::int64_t n, const float* scale, sim::Format format,
              sim::Overflow mode, const QuantizeOutputs& out, cudaStream_t stream = nullptr);
void quantize_bf16(const std::uint16_t* x, std::int64_t n, const float* scale, sim::Format format,
                   sim::Overflow mode, const QuantizeOutputs& out, cudaStream_t stream = nullptr);
void quantize_stochastic(const float* x, std::int64_t n, const float* scale, sim::Format format,
                         sim::Overflow mode, const StochasticStream& random,
                         const QuantizeOutputs& out, cudaStream_t stream = nullptr);

// Row-major [rows, cols] fp32 input: codes row-major as quantize writes them, and the same codes
// transposed ([cols, rows], row-major) in `codes_transposed` (TE's cast_transpose: Hopper FP8
// GEMMs want both K-major layouts, te-accelerate.md §2.4).
void quantize_transpose(const float* x, std::int64_t rows, std::int64_t cols, const float* scale,
                        sim::Format format, sim::Overflow mode, const QuantizeOutputs& out,
                        std::uint8_t* codes_transposed, cudaStream_t stream = nullptr);

// Blocking read of accumulated statistics.
DeviceQuantizeStats read_stats(const DeviceQuantizeStats* stats);

}  // namespace fp8lab::gpu
