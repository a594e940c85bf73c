// Host entry points to the per-group code of the quantize kernels (gpu/quantize_common.cuh),
// compiled for the host, so that tests without a GPU check the kernels' fast path (and its
// fallback) against sim/: tests/gpu/quantize_host_test.cpp.
#pragma once

#include <cstdint>

#include "sim/cast.hpp"  // Format, Overflow (declarations only)

namespace fp8lab::gpu::host_twin {

// The fields of sim::QuantizeStats (sim/quantize.hpp is C++20, CUDA sources here C++17).
struct QuantizeCounts {
  float amax = 0.0f;
  std::uint64_t count = 0, saturated = 0, underflowed = 0, nan = 0;
};

// RNE codes of x[0..n) (n a multiple of 4) through detail::quantize_rn_group, one group of four
// values at a time (the group of one fp32 load of the kernels), and the statistics the kernels
// would accumulate for them (count = n).
QuantizeCounts quantize_rn_groups(const float* x, std::int64_t n, float scale, sim::Format format,
                                  sim::Overflow mode, std::uint8_t* codes);

// Stochastic codes of x[0..n) (n a multiple of 4) through detail::quantize_stochastic_group, four
// values at a time; value i draws philox_block_word(seed, stream, first_index + i), as
// gpu::quantize_stochastic.
QuantizeCounts quantize_stochastic_groups(const float* x, std::int64_t n, float scale,
                                          sim::Format format, sim::Overflow mode,
                                          std::uint64_t seed, std::uint64_t stream,
                                          std::uint64_t first_index, std::uint8_t* codes);

// detail::rn_in_range (one y) and detail::all_rn_in_range (x[0..n) at `scale`, from their amax
// and NaN presence), the fast-path tests of the kernels.
bool rn_in_range(float y, sim::Format format);
bool all_rn_in_range(const float* x, int n, float scale, sim::Format format);

}  // namespace fp8lab::gpu::host_twin
