// Fused quantize + amax + statistics kernels (gpu/quantize.hpp). Work is split into warp chunks:
// per step, a warp takes 32 x kLoads 16-byte loads (fp32: 512 elements, bf16: 1024), load j of
// lane l covering the elements (j * 32 + l) * per_load ... + per_load - 1 of the chunk, so that each
// load and each store instruction of the warp touches one contiguous range. All kLoads loads of a
// step are issued before any arithmetic (64 bytes in flight per thread). RNE steps take a fast
// path (quantize_rn_four_in_range) when no element is NaN or overflows, else the per-element code;
// the unaligned head of a misaligned pointer pair and the tail (less than one chunk) run one
// element per thread through the per-element code.
//
// Instructions per element of the steady-state loop (issue #7): scripts/sass-per-element on
// quantize.cu.o; figures in bench/gpu_quantize_bench.cu.
#include <cuda_runtime.h>

#include <stdexcept>

#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"
#include "gpu/quantize_layout.hpp"
#include "sim/rng.hpp"

namespace fp8lab::gpu {
namespace detail {

int grid_size(std::int64_t work_items, int threads_per_block, int blocks_per_sm) {
  static const int sm_count = [] {
    int device = 0, count = 0;
    FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
    FP8LAB_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
  }();
  const std::int64_t needed = (work_items + threads_per_block - 1) / threads_per_block;
  const std::int64_t cap = static_cast<std::int64_t>(sm_count) * blocks_per_sm;
  return static_cast<int>(needed < 1 ? 1 : (needed < cap ? needed : cap));
}

}  // namespace detail
namespace {

using detail::Counters;
constexpr int kThreads = 256;
using layout::kLoads;

// Elements per 16-byte load and per step of a thread (gpu/quantize_layout.hpp).
template <typename In>
constexpr int kPerLoad = layout::per_load(sizeof(In));
template <typename In>
constexpr int kPerStep = kPerLoad<In>* kLoads;

// One thread's step: kLoads 16-byte loads kept as loaded (fp32: 16 values, bf16: 32 in half the
// registers), each value widened to fp32 where it is used.
template <typename In>
struct StepValues {
  uint4 raw[kLoads];

  __device__ void load(const In* p) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j)
      raw[j] = *reinterpret_cast<const uint4*>(p + j * 32 * kPerLoad<In>);
  }
  __device__ std::uint32_t word(int w) const {
    const uint4& r = raw[w / 4];
    return w % 4 == 0 ? r.x : w % 4 == 1 ? r.y : w % 4 == 2 ? r.z : r.w;
  }
  __device__ float operator[](int k) const {
    if constexpr (sizeof(In) == 4) {
      return __uint_as_float(word(k));
    } else {  // bf16: the top half of the fp32 pattern
      const std::uint32_t w = word(k / 2);
      return __uint_as_float(k % 2 == 0 ? w << 16 : w & 0xFFFF'0000u);
    }
  }
};

// The codes of one load: 4 (fp32) in one 4-byte store, 8 (bf16) in one 8-byte store.
__device__ inline void store_codes(std::uint8_t* p, const std::uint32_t* words, int count) {
  if (count == 1) {
    *reinterpret_cast<std::uint32_t*>(p) = words[0];
  } else {
    *reinterpret_cast<uint2*>(p) = make_uint2(words[0], words[1]);
  }
}
__device__ inline float load1(const float* x, std::int64_t i) { return x[i]; }
__device__ inline float load1(const std::uint16_t* x, std::int64_t i) {
  return bf16_to_float(x[i]);
}

// RNE or stochastic, one element at a time or a group of N (a multiple of 4). `index(k)` is the
// position in x of value k of the step (the stochastic stream's index). A const kernel parameter.
template <Format F, Overflow M, bool kStochastic>
struct ElementQuantizer {
  static constexpr bool kComputeBound = kStochastic;
  StochasticStream random;

  __device__ std::uint32_t one(float x, std::int64_t i, float scale, Counters& c) const {
    if constexpr (kStochastic) {
      const float y = mul_rn(x, scale);
      const std::uint32_t word = sim::philox_block_word(
          random.seed, random.stream, random.first_index + static_cast<std::uint64_t>(i));
      const StochasticCode q = cast_stochastic_with_flag<F, M>(y, word);
      c.add<F>(x, y, q.code, q.overflowed);
      return q.code;
    } else {
      (void)i;
      return detail::quantize_rn_one<F, M>(x, scale, c);
    }
  }

  // The codes of the N values v[first], ..., v[first + N - 1] (one load's), as N / 4 words.
  template <int N, typename Values, typename Index>
  __device__ void group(const Values& v, int first, Index index, float scale,
                        std::uint32_t (&words)[N / 4], Counters& c) const {
    if constexpr (kStochastic) {
      detail::quantize_stochastic_group<F, M, N>(v, first, index, scale, random, words, c);
    } else {
      (void)index;
      detail::quantize_rn_group<F, M, N>(v, first, scale, words, c);
    }
  }
};

// `head` elements one by one (so that x + head and out + head are aligned), then whole chunks,
// one per warp and step, then the tail one by one. head = n makes the whole call scalar.
template <typename In, typename Quantizer>
__global__ void __launch_bounds__(kThreads)
    quantize_kernel(const In* __restrict__ x, std::int64_t n, std::int64_t head,
                    const float* __restrict__ scale_ptr, const Quantizer quantizer,
                    std::uint8_t* __restrict__ out, float* amax, DeviceQuantizeStats* stats,
                    float* scale_inv) {
  constexpr int kLoad = kPerLoad<In>;
  const float scale = *scale_ptr;
  Counters c;
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = thread; i < head; i += threads) {
    out[i] = static_cast<std::uint8_t>(quantizer.one(load1(x, i), i, scale, c));
  }
  const std::int64_t chunks = (n - head) / layout::chunk_values(sizeof(In));
  const int lane = static_cast<int>(threadIdx.x & 31u);
  // Quantizers with much arithmetic per value (stochastic: a Philox block per four) load the next
  // step while they compute this one, so that its memory latency hides behind the arithmetic.
  constexpr bool kPrefetch = Quantizer::kComputeBound;
  StepValues<In> next;
  if (kPrefetch && thread / 32 < chunks)
    next.load(x + layout::chunk_value(head, thread / 32, lane, 0, sizeof(In)));
  for (std::int64_t chunk = thread / 32; chunk < chunks; chunk += threads / 32) {
    // This lane's first value; value k is index(k) = first + a constant (load j: j * 32 * kLoad).
    const std::int64_t first = layout::chunk_value(head, chunk, lane, 0, sizeof(In));
    StepValues<In> v;
    if constexpr (kPrefetch) {
      v = next;
      const std::int64_t following = chunk + threads / 32;
      if (following < chunks)
        next.load(x + layout::chunk_value(head, following, lane, 0, sizeof(In)));
    } else {
      v.load(x + first);
    }
    const auto index = [head, chunk, lane](int k) {
      return layout::chunk_value(head, chunk, lane, k, sizeof(In));
    };
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      std::uint32_t words[kLoad / 4];
      quantizer.template group<kLoad>(v, j * kLoad, index, scale, words, c);
      store_codes(out + first + j * 32 * kLoad, words, kLoad / 4);
    }
  }
  for (std::int64_t i = head + chunks * layout::chunk_values(sizeof(In)) + thread; i < n;
       i += threads) {
    out[i] = static_cast<std::uint8_t>(quantizer.one(load1(x, i), i, scale, c));
  }
  detail::flush_counters(c, amax, stats);
  if (thread == 0) detail::finish_per_tensor(n, scale, stats, scale_inv);
}

template <typename In, bool kStochastic>
struct Launch {
  const In* x;
  std::int64_t n;
  const float* scale;
  StochasticStream random;
  const QuantizeOutputs& out;
  cudaStream_t stream;

  template <Format F, Overflow M>
  void operator()() const {
    using Quantizer = ElementQuantizer<F, M, kStochastic>;
    const auto kernel = quantize_kernel<In, Quantizer>;
    static const int resident = detail::resident_blocks(kernel, kThreads);
    const layout::Partition p = layout::partition(reinterpret_cast<std::uintptr_t>(x),
                                                  reinterpret_cast<std::uintptr_t>(out.codes), n,
                                                  sizeof(In));
    const std::int64_t leftover = p.head + (n - p.tail_begin);
    const int blocks = detail::grid_size(p.chunks * 32 + leftover, kThreads, resident);
    kernel<<<blocks, kThreads, 0, stream>>>(x, n, p.head, scale, Quantizer{random}, out.codes,
                                            out.amax, out.stats, out.scale_inv);
    FP8LAB_CUDA_CHECK_LAUNCH();
  }
};

template <typename In, bool kStochastic>
void run(const char* function, const In* x, std::int64_t n, const float* scale, sim::Format format,
         sim::Overflow mode, const StochasticStream& random, const QuantizeOutputs& out,
         cudaStream_t stream) {
  if (out.codes == nullptr || x == nullptr || scale == nullptr) {
    if (n == 0) return;
    throw std::invalid_argument(std::string(function) +
                                ": x, scale and out.codes must be device pointers, got null");
  }
  if (n < 0)
    throw std::invalid_argument(std::string(function) + ": n = " + std::to_string(n) + " < 0");
  detail::dispatch_format_mode(format, mode, function,
                               Launch<In, kStochastic>{x, n, scale, random, out, stream});
}

}  // namespace

void quantize(const float* x, std::int64_t n, const float* scale, sim::Format format,
              sim::Overflow mode, const QuantizeOutputs& out, cudaStream_t stream) {
  run<float, false>("gpu::quantize", x, n, scale, format, mode, {}, out, stream);
}

void quantize_bf16(const std::uint16_t* x, std::int64_t n, const float* scale, sim::Format format,
                   sim::Overflow mode, const QuantizeOutputs& out, cudaStream_t stream) {
  run<std::uint16_t, false>("gpu::quantize_bf16", x, n, scale, format, mode, {}, out, stream);
}

void quantize_stochastic(const float* x, std::int64_t n, const float* scale, sim::Format format,
                         sim::Overflow mode, const StochasticStream& random,
                         const QuantizeOutputs& out, cudaStream_t stream) {
  run<float, true>("gpu::quantize_stochastic", x, n, scale, format, mode, random, out, stream);
}

DeviceQuantizeStats read_stats(const DeviceQuantizeStats* stats) {
  DeviceQuantizeStats host{};
  FP8LAB_CUDA_CHECK(cudaMemcpy(&host, stats, sizeof host, cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace fp8lab::gpu
