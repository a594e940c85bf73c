// Where the threads of gpu::quantize's kernels (gpu/quantize.cu) read and write: pure functions
// shared by the kernels and by tests/gpu/quantize_host_test.cpp, which checks on the host that the
// scalar head, the warp chunks and the scalar tail cover every element exactly once and that
// every 16-byte load and every code store of a chunk is aligned.
#pragma once

#include <cstdint>

#include "sim/format.hpp"  // FP8LAB_HD

namespace fp8lab::gpu::layout {

inline constexpr int kLoads = 4;  // 16-byte loads per lane and step, all in flight at once

// Values per 16-byte load of an input of `in_bytes` bytes per value (fp32 4, bf16 2), and per
// chunk (one warp step: 32 lanes x kLoads loads).
FP8LAB_HD constexpr int per_load(int in_bytes) { return 16 / in_bytes; }
FP8LAB_HD constexpr std::int64_t chunk_values(int in_bytes) {
  return std::int64_t{32} * kLoads * per_load(in_bytes);
}

// Values taken one by one before the chunks so that x + head is 16-byte aligned and out + head
// is aligned for one load's codes (per_load bytes: one 4- or 8-byte store); n when no head does
// both (the whole call then runs one value at a time).
FP8LAB_HD constexpr std::int64_t aligned_head(std::uintptr_t x, std::uintptr_t out, std::int64_t n,
                                              int in_bytes) {
  const int load = per_load(in_bytes);
  for (std::int64_t h = 0; h < load && h <= n; ++h) {
    const auto x_h = x + static_cast<std::uintptr_t>(h) * static_cast<std::uintptr_t>(in_bytes);
    const auto out_h = out + static_cast<std::uintptr_t>(h);
    if (x_h % 16 == 0 && out_h % static_cast<std::uintptr_t>(load) == 0) return h;
  }
  return n;
}

// [0, head) one by one, then `chunks` whole chunks, then [tail_begin, n) one by one.
struct Partition {
  std::int64_t head, chunks, tail_begin;
};
FP8LAB_HD constexpr Partition partition(std::uintptr_t x, std::uintptr_t out, std::int64_t n,
                                        int in_bytes) {
  const std::int64_t head = aligned_head(x, out, n, in_bytes);
  const std::int64_t chunks = (n - head) / chunk_values(in_bytes);
  return {head, chunks, head + chunks * chunk_values(in_bytes)};
}

// The element index of value k (0 <= k < kLoads * per_load) of `lane`'s step in `chunk`: load
// j = k / per_load covers the chunk's values (j * 32 + lane) * per_load .. + per_load - 1, so that
// each load (and store) instruction of the warp touches one contiguous run.
FP8LAB_HD constexpr std::int64_t chunk_value(std::int64_t head, std::int64_t chunk, int lane, int k,
                                             int in_bytes) {
  const int load = per_load(in_bytes);
  return head + chunk * chunk_values(in_bytes) + ((k / load) * 32 + lane) * load + k % load;
}

}  // namespace fp8lab::gpu::layout
