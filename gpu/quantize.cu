// Fused quantize + amax + statistics kernels (gpu/quantize.hpp). Each thread takes 8 consecutive
// elements per step (fp32: two 16-byte loads, bf16: one; one 8-byte store of codes) in a
// grid-stride loop; the unaligned head of a misaligned pointer pair and the tail run one element
// per step through the same per-element code.
#include <cuda_runtime.h>

#include <stdexcept>

#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"
#include "sim/rng.hpp"

namespace fp8lab::gpu {
namespace detail {

int grid_size(std::int64_t work_items, int threads_per_block) {
  static const int sm_count = [] {
    int device = 0, count = 0;
    FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
    FP8LAB_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
  }();
  const std::int64_t needed = (work_items + threads_per_block - 1) / threads_per_block;
  const std::int64_t cap = static_cast<std::int64_t>(sm_count) * 8;
  return static_cast<int>(needed < 1 ? 1 : (needed < cap ? needed : cap));
}

}  // namespace detail
namespace {

using detail::Counters;
constexpr int kThreads = 256;
constexpr int kVector = 8;

__device__ inline void load8(const float* x, std::int64_t i, float v[kVector]) {
  const float4 a = *reinterpret_cast<const float4*>(x + i);
  const float4 b = *reinterpret_cast<const float4*>(x + i + 4);
  v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
  v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}
__device__ inline void load8(const std::uint16_t* x, std::int64_t i, float v[kVector]) {
  const uint4 a = *reinterpret_cast<const uint4*>(x + i);
  const std::uint32_t words[4] = {a.x, a.y, a.z, a.w};
  for (int k = 0; k < 4; ++k) {
    v[2 * k] = __uint_as_float(words[k] << 16);
    v[2 * k + 1] = __uint_as_float(words[k] & 0xFFFF'0000u);
  }
}
__device__ inline float load1(const float* x, std::int64_t i) { return x[i]; }
__device__ inline float load1(const std::uint16_t* x, std::int64_t i) { return bf16_to_float(x[i]); }

// RNE or stochastic, one element at a time or eight.
template <Format F, Overflow M, bool kStochastic>
struct ElementQuantizer {
  float scale;
  StochasticStream random;

  __device__ std::uint32_t one(float x, std::int64_t i, Counters& c) const {
    if constexpr (kStochastic) {
      const float y = mul_rn(x, scale);
      const std::uint32_t word = sim::philox_random_word(
          random.seed, random.stream, random.first_index + static_cast<std::uint64_t>(i));
      const StochasticCode q = cast_stochastic_with_flag<F, M>(y, word);
      c.add<F>(x, y, q.code, q.overflowed);
      return q.code;
    } else {
      (void)i;
      return detail::quantize_rn_one<F, M>(x, scale, c);
    }
  }
  // Eight codes packed little-endian into two words.
  __device__ uint2 eight(const float v[kVector], std::int64_t i, Counters& c) const {
    std::uint32_t words[2] = {0, 0};
    for (int k = 0; k < kVector; k += 2) {
      std::uint32_t pair;
      if constexpr (kStochastic) {
        pair = one(v[k], i + k, c) | (one(v[k + 1], i + k + 1, c) << 8);
      } else {
        pair = detail::quantize_rn_two<F, M>(v[k], v[k + 1], scale, c);
      }
      words[k / 4] |= pair << (8 * (k % 4));
    }
    return make_uint2(words[0], words[1]);
  }
};

// `head` elements one by one (so that x + head and out + head are aligned), then groups of 8,
// then the tail one by one. head = n makes the whole call scalar.
template <typename In, typename Quantizer>
__global__ void __launch_bounds__(kThreads)
    quantize_kernel(const In* __restrict__ x, std::int64_t n, std::int64_t head,
                    const float* __restrict__ scale, Quantizer quantizer,
                    std::uint8_t* __restrict__ out, float* amax, DeviceQuantizeStats* stats,
                    float* scale_inv) {
  quantizer.scale = *scale;
  Counters c;
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = thread; i < head; i += threads) {
    out[i] = static_cast<std::uint8_t>(quantizer.one(load1(x, i), i, c));
  }
  const std::int64_t groups = (n - head) / kVector;
  for (std::int64_t g = thread; g < groups; g += threads) {
    const std::int64_t i = head + g * kVector;
    float v[kVector];
    load8(x, i, v);
    *reinterpret_cast<uint2*>(out + i) = quantizer.eight(v, i, c);
  }
  for (std::int64_t i = head + groups * kVector + thread; i < n; i += threads) {
    out[i] = static_cast<std::uint8_t>(quantizer.one(load1(x, i), i, c));
  }
  detail::flush_counters(c, amax, stats);
  if (thread == 0) detail::finish_per_tensor(n, quantizer.scale, stats, scale_inv);
}

// Elements to take one by one so that both x + head (16-byte loads) and out + head (8-byte
// stores) are aligned; n when no such head exists.
template <typename In>
std::int64_t aligned_head(const In* x, const std::uint8_t* out, std::int64_t n) {
  const auto xa = reinterpret_cast<std::uintptr_t>(x);
  const auto oa = reinterpret_cast<std::uintptr_t>(out);
  for (std::int64_t h = 0; h < kVector && h <= n; ++h) {
    if ((xa + h * sizeof(In)) % 16 == 0 && (oa + h) % 8 == 0) return h;
  }
  return n;
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
    const std::int64_t head = aligned_head(x, out.codes, n);
    const int blocks = detail::grid_size(head + (n - head) / kVector, kThreads);
    const ElementQuantizer<F, M, kStochastic> quantizer{0.0f, random};
    quantize_kernel<<<blocks, kThreads, 0, stream>>>(x, n, head, scale, quantizer, out.codes,
                                                    out.amax, out.stats, out.scale_inv);
    FP8LAB_CUDA_CHECK_LAUNCH();
  }
};

template <typename In, bool kStochastic>
void run(const char* function, const In* x, std::int64_t n, const float* scale,
         sim::Format format, sim::Overflow mode, const StochasticStream& random,
         const QuantizeOutputs& out, cudaStream_t stream) {
  if (out.codes == nullptr || x == nullptr || scale == nullptr) {
    if (n == 0) return;
    throw std::invalid_argument(std::string(function) + ": x, scale and out.codes must be device pointers, got null");
  }
  if (n < 0) throw std::invalid_argument(std::string(function) + ": n = " + std::to_string(n) + " < 0");
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
