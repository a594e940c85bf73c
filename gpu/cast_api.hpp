// Host entry points to the casts of gpu/cast.cuh, for tests and `fp8lab check`:
// - host_twin::*: the same __host__ __device__ code compiled for the host, so that the casts'
//   logic is checked against sim/ on machines without a GPU;
// - cast_range / decode_all: the device instantiation over a range of fp32 bit patterns, for the
//   exhaustive 2^32 check on a GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "sim/cast.hpp"  // Format, Overflow (declarations only)

namespace fp8lab::gpu {

namespace host_twin {
std::uint8_t cast_rn(float y, sim::Format format, sim::Overflow mode);
std::uint8_t cast_stochastic(float y, sim::Format format, sim::Overflow mode, std::uint32_t random);
float decode(std::uint8_t code, sim::Format format);
}  // namespace host_twin

// codes[i] = cast of the fp32 with bit pattern first_bits + i, for i < count (device pointers).
// Stochastic when `stochastic`: the random word of pattern b is sim::philox_block_word(seed, 0, b).
void cast_range(std::uint32_t first_bits, std::int64_t count, sim::Format format,
                sim::Overflow mode, bool stochastic, std::uint64_t seed, std::uint8_t* codes,
                cudaStream_t stream = nullptr);
// values[c] = decode(c) for the 256 codes of an FP8 format (device pointer to 256 floats).
void decode_all(sim::Format format, float* values, cudaStream_t stream = nullptr);

}  // namespace fp8lab::gpu
