// Pieces every quantize kernel shares: the per-element step that mirrors sim's
// reference::count_element, the branch-free step for a group of four in-range values (the fast
// path, proven against sim on the host by tests/gpu/quantize_host_test.cpp), the per-thread
// counters and their block-level reduction into device memory, and the dispatch from runtime
// (format, overflow mode) to a kernel instantiation.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cast.cuh"
#include "gpu/cuda_check.hpp"
#include "gpu/quantize.hpp"
#include "sim/element_count.hpp"
#include "sim/rng.hpp"

namespace fp8lab::gpu::detail {

// max(amax, |x|) with NaN x ignored (sim::amax_update). The device's fmaxf (one FMNMX) ignores
// every NaN; glibc's fmax returns NaN for a signalling NaN, so the host twins compare instead.
FP8LAB_HD inline float amax_update(float amax, float x) {
#if defined(__CUDA_ARCH__)
  return fmaxf(amax, fabsf(x));
#else
  const float a = std::fabs(x);
  return a > amax ? a : amax;  // false for NaN
#endif
}

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
    amax = amax_update(amax, x);
    saturated += (overflowed && !std::isnan(y)) ? 1u : 0u;
    underflowed += (x != 0.0f && !std::isnan(x) && (code & Fp8<F>::kMagnitudeMask) == 0) ? 1u : 0u;
    nan += Fp8<F>::is_nan_code(code) ? 1u : 0u;
  }
};

// The RNE quantize of one element, counted.
// (quantize_rn_four_in_range below is the same for the common case, with less work per element.)
template <Format F, Overflow M>
FP8LAB_HD inline std::uint32_t quantize_rn_one(float x, float scale, Counters& c) {
  const float y = mul_rn(x, scale);
  const std::uint32_t code = cast_rn<F, M>(y);
  c.add<F>(x, y, code, Fp8<F>::rn_overflows(y));
  return code;
}

// Two RNE quantizes through one paired conversion; codes in bits 0..7 and 8..15.
template <Format F, Overflow M>
FP8LAB_HD inline std::uint32_t quantize_rn_two(float x0, float x1, float scale, Counters& c) {
  const float y0 = mul_rn(x0, scale), y1 = mul_rn(x1, scale);
  const std::uint32_t pair = cast_rn_x2<F, M>(y0, y1);
  c.add<F>(x0, y0, pair & 0xFFu, Fp8<F>::rn_overflows(y0));
  c.add<F>(x1, y1, pair >> 8, Fp8<F>::rn_overflows(y1));
  return pair;
}

// Whether y is not NaN and RNE of y does not overflow: then fix_rn<F, M>(y, sat) is the satfinite
// conversion's code, or ±0 when |y| is at most half the smallest subnormal, in every overflow
// mode. False for NaN (the comparisons are false).
template <Format F>
FP8LAB_HD inline bool rn_in_range(float y) {
  const float a = std::fabs(y);
  return Fp8<F>::kTieOverflows ? a < Fp8<F>::kOverflowTie : a <= Fp8<F>::kOverflowTie;
}

// Byte k of the result is byte `top` of word k (a PRMT on the device).
FP8LAB_HD inline std::uint32_t pick_bytes(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2,
                                          std::uint32_t w3, int top) {
#if defined(__CUDA_ARCH__)
  const std::uint32_t sel = static_cast<std::uint32_t>(top) |
                            (static_cast<std::uint32_t>(top + 4) << 4);
  return __byte_perm(__byte_perm(w0, w1, sel), __byte_perm(w2, w3, sel), 0x5410);
#else
  const int s = 8 * top;
  return ((w0 >> s) & 0xFFu) | (((w1 >> s) & 0xFFu) << 8) | (((w2 >> s) & 0xFFu) << 16) |
         (((w3 >> s) & 0xFFu) << 24);
#endif
}

// Four RNE codes, little-endian in one word, of x[k] whose y[k] = RN(x[k] * scale) are all
// rn_in_range<F>, counted: equal to quantize_rn_one<F, M> on each element for every mode M.
// Why, case by case of fix_rn: y is not NaN and does not overflow, so the code is the satfinite
// conversion's byte, except for |y| <= 2^(min_subnormal - 1) ("tiny"), whose code is the sign
// alone; both are merged here with byte masks instead of a branch per element. Statistics: amax
// as Counters::add; no y overflows (saturated += 0); no code is NaN (the in-range codes are
// finite: E4M3 at most 448 = 0x7E, E5M2 at most 57344 = 0x7B); a code has magnitude 0 exactly
// when y is tiny (above it RNE reaches the smallest subnormal), so underflowed counts tiny y with
// x != 0 (x is not NaN: y would be).
// kCountAmax = false leaves amax to the caller (who folds it once for many groups).
template <Format F, bool kCountAmax = true>
FP8LAB_HD inline std::uint32_t quantize_rn_four_in_range(const float x[4], float scale,
                                                         Counters& c) {
  using T = Fp8<F>;
  const float y[4] = {mul_rn(x[0], scale), mul_rn(x[1], scale), mul_rn(x[2], scale),
                      mul_rn(x[3], scale)};
  const float kTiny = bits_float(T::kHalfMinSubnormalBits);
  const std::uint32_t lo = cvt_satfinite_x2<F>(y[0], y[1]) & 0xFFFFu;
  const std::uint32_t hi = cvt_satfinite_x2<F>(y[2], y[3]) & 0xFFFFu;
  std::uint32_t tiny_bytes = 0;
  for (int k = 0; k < 4; ++k) {
    const bool tiny = std::fabs(y[k]) <= kTiny;
    tiny_bytes |= tiny ? 0xFFu << (8 * k) : 0u;
    c.underflowed += (tiny && x[k] != 0.0f) ? 1u : 0u;
    if (kCountAmax) c.amax = amax_update(c.amax, x[k]);
  }
  // The sign bit of each y moved to bit 7 of its byte: the code of a tiny y.
  const std::uint32_t signs =
      pick_bytes(float_bits(y[0]), float_bits(y[1]), float_bits(y[2]), float_bits(y[3]), 3) &
      0x8080'8080u;
  return ((lo | (hi << 16)) & ~tiny_bytes) | (signs & tiny_bytes);
}

// The RNE codes of v[first], ..., v[first + N - 1] (N a multiple of 4; v anything with an
// operator[] giving floats), as N / 4 little-endian words, counted: quantize_rn_four_in_range when
// no y of the group is NaN or overflows (the common case), else quantize_rn_two on each pair, which
// handles every case of fix_rn. The group is what one 16-byte load of the kernels holds.
template <Format F, Overflow M, int N, typename Values>
FP8LAB_HD inline void quantize_rn_group(const Values& v, int first, float scale,
                                        std::uint32_t (&words)[N / 4], Counters& c) {
  bool in_range = true;
  for (int k = 0; k < N; ++k) in_range &= rn_in_range<F>(mul_rn(v[first + k], scale));
  for (int k = 0; k < N; k += 4) {
    const float x4[4] = {v[first + k], v[first + k + 1], v[first + k + 2], v[first + k + 3]};
    words[k / 4] = in_range ? quantize_rn_four_in_range<F>(x4, scale, c)
                            : quantize_rn_two<F, M>(x4[0], x4[1], scale, c) |
                                  (quantize_rn_two<F, M>(x4[2], x4[3], scale, c) << 16);
  }
}

// The stochastic codes of v[first], ..., v[first + N - 1] (N a multiple of 4), value k drawing
// the random word philox_block_word(seed, stream, first_index + index(first + k)) (sim/rng.hpp),
// as N / 4 little-endian words, counted as Counters::add counts them. The values of a group are
// consecutive elements (index(first + k) = index(first) + k, as in every caller): their words
// come from the N / 4 Philox blocks they span, N / 4 + 1 when the group does not start a block. When no value of the group overflows
// and no y is NaN ("plain", the common case) the counting is shorter: saturated and nan gain
// nothing (a code that did not overflow is a finite code of a non-NaN y), x is not NaN (y would
// be), so underflowed is x != 0 with a code of magnitude 0, and amax as always.
template <Format F, Overflow M, int N, typename Values, typename Index>
FP8LAB_HD inline void quantize_stochastic_group(const Values& v, int first, Index index,
                                                float scale, const StochasticStream& random,
                                                std::uint32_t (&words)[N / 4], Counters& c) {
  const std::uint64_t start = random.first_index + static_cast<std::uint64_t>(index(first));
  const auto offset = static_cast<int>(start & 3u);  // value k draws block word offset + k
  std::uint32_t block_words[N + 4] = {};
  for (int b = 0; b <= N / 4; ++b) {
    if (b < N / 4 || offset != 0) {
      const sim::Philox4x32Block block =
          sim::philox_block(random.seed, random.stream, (start >> 2) + static_cast<unsigned>(b));
      for (int w = 0; w < 4; ++w) block_words[4 * b + w] = block.word[w];
    }
  }
  std::uint32_t codes[N];
  std::uint32_t overflowed = 0;  // bit k: value k hit the overflow rule
  bool plain = true;
  for (int k = 0; k < N; ++k) {
    const float y = mul_rn(v[first + k], scale);
    // Constant indices for each k (the array stays in registers on the device).
    const std::uint32_t word = offset == 0   ? block_words[k]
                               : offset == 1 ? block_words[k + 1]
                               : offset == 2 ? block_words[k + 2]
                                             : block_words[k + 3];
    const StochasticCode q = cast_stochastic_with_flag<F, M>(y, word);
    codes[k] = q.code;
    overflowed |= q.overflowed ? 1u << k : 0u;
    plain = plain && !q.overflowed && !std::isnan(y);
  }
  for (int k = 0; k < N; ++k) {
    const float x = v[first + k];
    if (plain) {
      c.amax = amax_update(c.amax, x);
      c.underflowed += (x != 0.0f && (codes[k] & Fp8<F>::kMagnitudeMask) == 0) ? 1u : 0u;
    } else {
      c.add<F>(x, mul_rn(x, scale), codes[k], ((overflowed >> k) & 1u) != 0);
    }
  }
  for (int k = 0; k < N; k += 4) {
    words[k / 4] = codes[k] | (codes[k + 1] << 8) | (codes[k + 2] << 16) | (codes[k + 3] << 24);
  }
}

// Whether every y = RN(x * scale) of some values is rn_in_range, given their amax (max |x|, NaN
// ignored) and whether one is NaN: for scale >= 0, |x1| <= |x2| gives |RN(x1 * scale)| <=
// |RN(x2 * scale)| (rounding is monotonic), and the in-range magnitudes are closed downwards, so
// all are in range exactly when the largest is (a NaN scale or Inf * 0 makes that y NaN: false).
// One test for a block instead of one per value (tests/gpu/quantize_host_test.cpp checks it).
template <Format F>
FP8LAB_HD inline bool all_rn_in_range(float amax, bool has_nan, float scale) {
  return !has_nan && !(scale < 0.0f) && rn_in_range<F>(mul_rn(amax, scale));
}

// Atomic fmax for non-negative floats (+Inf included): their bit patterns order like integers.
__device__ inline void atomic_max_nonnegative(float* address, float value) {
  atomicMax(reinterpret_cast<int*>(address), __float_as_int(value));
}

__device__ inline void warp_reduce(Counters& c) {
  for (int offset = 16; offset > 0; offset /= 2) {
    c.amax = fmaxf(c.amax, __shfl_xor_sync(0xFFFFFFFFu, c.amax, offset));
    c.saturated += __shfl_xor_sync(0xFFFFFFFFu, c.saturated, offset);
    c.underflowed += __shfl_xor_sync(0xFFFFFFFFu, c.underflowed, offset);
    c.nan += __shfl_xor_sync(0xFFFFFFFFu, c.nan, offset);
  }
}

// Reduces the counters over the thread block (warp shuffles, then the warps' sums through shared
// memory), and thread 0 adds them to device memory: one atomic per counter and block instead of
// one per warp, since atomics on one address serialize in L2. Every thread of the block must call
// it (it has a barrier). The element count is added once by the caller's choice of thread.
__device__ inline void flush_counters(Counters c, float* amax_out, DeviceQuantizeStats* stats) {
  __shared__ Counters warp_sums[32];
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
  warp_reduce(c);
  if ((thread & 31u) == 0) warp_sums[thread / 32u] = c;
  __syncthreads();
  if (thread >= 32) return;
  c = thread < warps ? warp_sums[thread] : Counters{};
  warp_reduce(c);
  if (thread != 0) return;
  if (amax_out != nullptr && c.amax > 0.0f) atomic_max_nonnegative(amax_out, c.amax);
  if (stats == nullptr) return;
  if (c.amax > 0.0f) atomic_max_nonnegative(&stats->amax, c.amax);
  if (c.saturated != 0) atomicAdd(&stats->saturated, static_cast<unsigned long long>(c.saturated));
  if (c.underflowed != 0)
    atomicAdd(&stats->underflowed, static_cast<unsigned long long>(c.underflowed));
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

// Static scaling's multiplier (gpu::scaling::quantize_static and its host twin): a positive finite
// fp32, as the recipe field static_scale is validated (recipes/fields.cpp); 1 / scale is then a
// finite value, and so is every RN(x * scale) of a finite x short of saturation.
inline void check_static_scale(const char* function, float scale) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) {
    throw std::invalid_argument(std::string(function) + ": scale = " + std::to_string(scale) +
                                "; accepted: a positive finite fp32");
  }
}

// The shape rules of every gpu/scaling quantizer, device entry point and host twin alike
// (blocked.cu, current.cu, scaling/host_twin.cu): rows, cols, block_rows, block_cols >= 1 (a
// per-tensor scaling's one block is rows x cols), and rows * cols within int64, since the kernels
// index up to it. Returns rows * cols. Null pointers are each caller's own check.
inline std::int64_t check_blocked_shape(const char* function, std::int64_t rows, std::int64_t cols,
                                        std::int64_t block_rows, std::int64_t block_cols) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument(std::string(function) + ": rows and cols must be >= 1, got " +
                                std::to_string(rows) + ", " + std::to_string(cols));
  }
  if (block_rows < 1 || block_cols < 1) {
    throw std::invalid_argument(std::string(function) +
                                ": block_rows and block_cols must be >= 1, got " +
                                std::to_string(block_rows) + ", " + std::to_string(block_cols));
  }
  return sim::checked_element_count(function, rows, cols);
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

// Blocks for a grid-stride loop: blocks_per_sm on every SM (by default 8, enough to fill an SM
// with small blocks), no more than needed.
int grid_size(std::int64_t work_items, int threads_per_block, int blocks_per_sm = 8);

// How many blocks of `kernel` fit on one SM at once (registers, shared memory): a grid of that
// many per SM runs in one wave, with no SM left with a second, partial one.
template <typename Kernel>
int resident_blocks(Kernel kernel, int threads_per_block) {
  int blocks = 0;
  FP8LAB_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads_per_block, 0));
  return blocks < 1 ? 1 : blocks;
}

}  // namespace fp8lab::gpu::detail
