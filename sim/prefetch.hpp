// How far ahead of the element being loaded the element-wise loops over a large fp32 or bf16
// input prefetch it (hwy::Prefetch, <hwy/cache_control.h>): quantize.cpp's bulk casts and
// fp4_stochastic_lanes.cpp's E2M1 stochastic rounding.
#pragma once

#include <cstddef>

namespace fp8lab::sim {

// The loops are about 40-60 instructions per vector, so the out-of-order window holds only a few
// input cache lines in flight: a tensor beyond L2 left them waiting on each line's latency, the
// bf16 path (32 input bytes per vector) most, and at 1/4-1/6 of memcpy's rate (perf record: ~70%
// of the kernel's samples on the instruction after its load). 4 KiB ahead (measured 2026-12-02 on
// the 2-core AVX-512 machine: 1-8 KiB all within noise of each other, none = 3-4x slower) turns
// them into loops bound by their instructions. A prefetch past the end of the input never faults.
inline constexpr std::size_t kPrefetchBytes = 4096;

}  // namespace fp8lab::sim
