// Pieces every quantize kernel shares: the per-element step that mirrors sim's
// reference::count_element, the per-thread counters and their reduction into device memory, and
// the dispatch from runtime (format, overflow mode) to a kernel instantiation.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cast.cuh"
#include "gpu/quantize.hpp"

namespace fp8lab::gpu::detail {

// What one thread saw; summed over the grid into DeviceQuantizeStats.
struct Counters {
  float amax = 0.0f;
  std::uint32_t saturated = 0;
  std::uint32_t underflowed = 0;
  std::uint32_t nan = 0;

  // The statistics of one element, as sim::reference::count_element defines them: x the input,
  // y = RN(x * scale), `overflowed` whether the cast's overflow rule applied to y.
  template <Format F>
  FP8LAB_HD void add(float x, float y, std::uint32_t code, bool overflowed) {
    amax = std::fmax(amax, std::fabs(x));
    saturated += (overflowed && !std::isnan(y)) ? 1u : 0u;
    underflowed += (x != 0.0f && !std::isnan(x) && (code & Fp8<F>::kMagnitudeMask) == 0) ? 1u : 0u;
    nan += Fp8<F>::is_nan_code(code) ? 1u : 0u;
  }
};

// The RNE quantize of one element, counted.
template <Format F, Overflow M>
__device__ inline std::uint32_t quantize_rn_one(float x, float scale, Counters& c) {
  const float y = mul_rn(x, scale);
  const std::uint32_t code = cast_rn<F, M>(y);
  c.add<F>(x, y, code, Fp8<F>::rn_overflows(y));
  return code;
}

// Two RNE quantizes through one paired conversion; codes in bits 0..7 and 8..15.
template <Format F, Overflow M>
__device__ inline std::uint32_t quantize_rn_two(float x0, float x1, float scale, Counters& c) {
  const float y0 = mul_rn(x0, scale), y1 = mul_rn(x1, scale);
  const std::uint32_t pair = cast_rn_x2<F, M>(y0, y1);
  c.add<F>(x0, y0, pair & 0xFFu, Fp8<F>::rn_overflows(y0));
  c.add<F>(x1, y1, pair >> 8, Fp8<F>::rn_overflows(y1));
  return pair;
}

// Atomic fmax for non-negative floats (+Inf included): their bit patterns order like integers.
__device__ inline void atomic_max_nonnegative(float* address, float value) {
  atomicMax(reinterpret_cast<int*>(address), __float_as_int(value));
}

// Warp-reduces the counters, then lane 0 of each warp adds them to device memory. Every thread
// of the warp must call it. `elements` (added once by the caller's choice of thread) is the count.
__device__ inline void flush_counters(Counters c, float* amax_out, DeviceQuantizeStats* stats) {
  for (int offset = 16; offset > 0; offset /= 2) {
    c.amax = fmaxf(c.amax, __shfl_xor_sync(0xFFFFFFFFu, c.amax, offset));
    c.saturated += __shfl_xor_sync(0xFFFFFFFFu, c.saturated, offset);
    c.underflowed += __shfl_xor_sync(0xFFFFFFFFu, c.underflowed, offset);
    c.nan += __shfl_xor_sync(0xFFFFFFFFu, c.nan, offset);
  }
  if ((threadIdx.x & 31u) != 0) return;
  if (amax_out != nullptr && c.amax > 0.0f) atomic_max_nonnegative(amax_out, c.amax);
  if (stats == nullptr) return;
  if (c.amax > 0.0f) atomic_max_nonnegative(&stats->amax, c.amax);
  if (c.saturated != 0) atomicAdd(&stats->saturated, static_cast<unsigned long long>(c.saturated));
  if (c.underflowed != 0) atomicAdd(&stats->underflowed, static_cast<unsigned long long>(c.underflowed));
  if (c.nan != 0) atomicAdd(&stats->nan, static_cast<unsigned long long>(c.nan));
}

// Once per call (one thread): the element count, and the per-tensor dequantization factor
// scale_inv = RN(1 / scale) (TE writes __frcp_rn(scale), the same correctly rounded value).
__device__ inline void finish_per_tensor(std::int64_t n, float scale, DeviceQuantizeStats* stats,
                                         float* scale_inv) {
  if (stats != nullptr) atomicAdd(&stats->count, static_cast<unsigned long long>(n));
  if (scale_inv != nullptr) *scale_inv = __fdiv_rn(1.0f, scale);
}

inline void check_fp8(sim::Format format, const char* function) {
  if (!sim::is_fp8(format)) {
    throw std::invalid_argument(std::string(function) + ": format = " + sim::spec(format).name +
                                "; accepted: e4m3, e5m2");
  }
}

// Calls launch.template operator()<F, M>() for the runtime format and overflow mode.
template <typename Launch>
void dispatch_format_mode(sim::Format format, sim::Overflow mode, const char* function,
                          Launch&& launch) {
  check_fp8(format, function);
  auto with_format = [&](auto format_tag) {
    constexpr Format kF = decltype(format_tag)::value;
    switch (mode) {
      case Overflow::kSatFinite: launch.template operator()<kF, Overflow::kSatFinite>(); return;
      case Overflow::kNoSat: launch.template operator()<kF, Overflow::kNoSat>(); return;
      case Overflow::kSatKeepInf: launch.template operator()<kF, Overflow::kSatKeepInf>(); return;
    }
    throw std::invalid_argument(std::string(function) + ": unknown overflow mode " +
                                std::to_string(static_cast<int>(mode)));
  };
  if (format == Format::E4M3) {
    with_format(std::integral_constant<Format, Format::E4M3>{});
  } else {
    with_format(std::integral_constant<Format, Format::E5M2>{});
  }
}

// Blocks for a grid-stride loop: enough to fill every SM several times over, no more than needed.
int grid_size(std::int64_t work_items, int threads_per_block);

}  // namespace fp8lab::gpu::detail
