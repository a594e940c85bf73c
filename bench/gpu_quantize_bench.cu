// GPU quantize kernels (plain, bf16, stochastic, transpose, and the recipes' MXFP8 1x32, TE block
// 1x128 and TE current scaling) in GB/s next to a device-to-device copy moving the same bytes,
// measured in the same run (counter ratio_vs_copy; goal >= 0.8). Bytes = input read + codes
// written (fp32: 5 per element, bf16: 3). 64 Mi elements: far beyond the 50 MiB L2 of an H200,
// so every pass streams from HBM. Timing: cudaEvents around each call (UseManualTime).
//
// Instruction budget (issue #7): an H200 issues 128 thread-instructions per clock per SM (132 SMs,
// ~1.98 GHz); at 0.8 of ~4.1 TB/s, fp32 -> fp8 (5 bytes per element) needs ~2.5 elements per
// SM-clock, i.e. at most ~50 SASS instructions per element at perfect issue (~35 realistically),
// bf16 (3 bytes) ~30 (~21). Measured on the sm_90a cubin with
//   scripts/sass-per-element <build>/gpu/CMakeFiles/fp8lab_gpu.dir/<file>.cu.o [kernel regex]
// (fast path of the steady-state loop / values per iteration; registers from cuobjdump -res-usage):
//
//   kernel (E4M3 unless said)   before (7ef1732)                       after
//   fp32 satfinite              204-236 / 8 = 25.5-29.5, 32 regs       199 / 16 = 12.4, 40 regs
//   fp32 E5M2 nosat             220-284 / 8 = 27.5-35.5, 32 regs       202 / 16 = 12.6, 42 regs
//   bf16 satfinite              209-241 / 8 = 26-30, 31 regs           410 / 32 = 12.8, 52 regs
//   stochastic satfinite        688-935 / 8 = 86-117, 61 regs          1004 / 16 = 62.8, 128 regs
//   current TE: amax pass       106 / 16 = 6.6 (4-byte loads), 32      47 / 16 = 2.9 (16-byte), 32
//   block 1x128 TE              ~61 (2 passes: 134 / 4 + ~110 / 4), 62  290 / 16 = 18.1, 47 regs
//   MXFP8 1x32 TE               more: one value per lane and block, 64  281 / 16 = 17.6, 46 regs
//   quantize + transpose        618-668 / 4 = 155-167, 31 regs         267 / 16 = 16.7, 43 regs
//
// "before" ranges: shortest to longest path (the old fix-ups branched per element); "after": the
// fast path (no NaN or overflow in a 16-byte group), whose fallback is the per-element code.
// Stochastic stays above the budget: one Philox4x32-10 per element (sim/rng.hpp) was ~40 integer
// multiply and xor instructions by itself (the figures above; since 2026-12-06 one block serves
// four elements, not measured on a device yet: docs/device-log.md); it prefetches the next step
// (2 blocks of 256 per SM).
#include <cstdint>

#include "bench/gpu_bench_util.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/quantize.hpp"
#include "gpu/scaling/blocked.hpp"

namespace fp8lab::bench {

namespace {

// Deterministic pseudo-random bell-shaped floats (|x| < 8): the sum of the four bytes of a further
// mixed hash, minus 510, over 64.
struct BellFloat {
  __device__ float operator()(std::uint32_t h) const {
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    const int s =
        static_cast<int>((h & 0xFF) + ((h >> 8) & 0xFF) + ((h >> 16) & 0xFF) + (h >> 24)) - 510;
    return static_cast<float>(s) / 64.0f;
  }
};

constexpr std::int64_t kElements = std::int64_t{1} << 26;

__global__ void to_bf16_kernel(const float* x, std::uint16_t* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[i] = static_cast<std::uint16_t>(__float_as_uint(x[i]) >> 16);
  }
}

// Device-to-device copy bandwidth for `bytes` of traffic (half read, half written), GB/s.
double copy_gbps(std::size_t bytes) {
  gpu::DeviceBuffer<std::uint8_t> src(bytes / 2), dst(bytes / 2);
  auto copy = [&] {
    FP8LAB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes / 2, cudaMemcpyDeviceToDevice));
  };
  copy();
  return static_cast<double>(bytes) / device_seconds(copy, 20) * 1e-9;
}

enum class Kind { kFp32, kBf16, kStochastic, kTranspose, kMxRowwise, kBlock1x128, kCurrentTe };

void BM_Quantize(benchmark::State& state, Kind kind, sim::Format format, sim::Overflow mode) {
  if (!have_device(state)) return;
  gpu::DeviceBuffer<float> x(kElements), scale(std::vector<float>{0.5f});
  gpu::DeviceBuffer<std::uint16_t> xb(kind == Kind::kBf16 ? kElements : 0);
  gpu::DeviceBuffer<std::uint8_t> codes(kElements),
      codes_t(kind == Kind::kTranspose ? kElements : 0);
  gpu::DeviceBuffer<gpu::DeviceQuantizeStats> stats(1);
  gpu::DeviceBuffer<float> amax(1), scale_inv(kElements / 32), scales(kElements / 32);
  gpu::DeviceBuffer<std::uint8_t> e8m0(kElements / 32);
  fill_hashed(x.get(), kElements, 1, BellFloat{});
  if (kind == Kind::kBf16) to_bf16_kernel<<<1024, 256>>>(x.get(), xb.get(), kElements);
  stats.zero();
  const gpu::QuantizeOutputs out{codes.get(), amax.get(), stats.get(), nullptr};
  const std::int64_t side = std::int64_t{1} << 13;  // 8192 x 8192 = kElements
  auto run = [&] {
    switch (kind) {
      case Kind::kFp32: gpu::quantize(x.get(), kElements, scale.get(), format, mode, out); break;
      case Kind::kBf16:
        gpu::quantize_bf16(xb.get(), kElements, scale.get(), format, mode, out);
        break;
      case Kind::kStochastic:
        gpu::quantize_stochastic(x.get(), kElements, scale.get(), format, mode, {7, 1, 0}, out);
        break;
      case Kind::kTranspose:
        gpu::quantize_transpose(x.get(), side, side, scale.get(), format, mode, out, codes_t.get());
        break;
      case Kind::kMxRowwise:
        gpu::scaling::quantize_mx(x.get(), side, side, 1, 32, format, gpu::scaling::E8M0Mode::kTe,
                                  gpu::scaling::TorchaoVersion::kV0_18,
                                  {codes.get(), scale_inv.get(), nullptr, e8m0.get(), stats.get()});
        break;
      case Kind::kBlock1x128:
        gpu::scaling::quantize_block_te(
            x.get(), side, side, 1, 128, format, true, 0.0f, 3.4028235e38f,
            {codes.get(), scale_inv.get(), nullptr, nullptr, stats.get()});
        break;
      case Kind::kCurrentTe:
        gpu::scaling::quantize_current_te(
            x.get(), side, side, format, false, 0.0f,
            {codes.get(), scale_inv.get(), nullptr, nullptr, stats.get()});
        break;
    }
  };
  const std::size_t in_bytes = kind == Kind::kBf16 ? 2 : 4;
  const std::size_t out_bytes = kind == Kind::kTranspose ? 2 : 1;
  // Block scales written: MX 4 + 1 bytes per 32 elements, 1x128 4 per 128 (current scaling reads
  // x twice: amax, then the cast).
  const std::size_t scale_bytes = kind == Kind::kMxRowwise    ? kElements / 32 * 5
                                  : kind == Kind::kBlock1x128 ? kElements / 128 * 4
                                                              : 0;
  const std::size_t reread = kind == Kind::kCurrentTe ? static_cast<std::size_t>(kElements) * 4 : 0;
  const std::size_t bytes = static_cast<std::size_t>(kElements) * (in_bytes + out_bytes) +
                            scale_bytes + reread;
  run();  // warm-up
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  const double copy = copy_gbps(bytes);
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = device_seconds(run);
    state.SetIterationTime(s);
    seconds += s;
  }
  const double gbps = static_cast<double>(bytes) * static_cast<double>(state.iterations()) /
                      seconds * 1e-9;
  state.counters["GB_per_s"] = gbps;
  state.counters["copy_GB_per_s"] = copy;
  state.counters["ratio_vs_copy"] = gbps / copy;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

// Every benchmark here: the kernels' CUDA-event time (SetIterationTime), in milliseconds.
void manual_time_ms(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}

using sim::Format;
using sim::Overflow;
BENCHMARK_CAPTURE(BM_Quantize, fp32_e4m3_satfinite, Kind::kFp32, Format::E4M3, Overflow::kSatFinite)
    ->Apply(manual_time_ms);
BENCHMARK_CAPTURE(BM_Quantize, fp32_e5m2_nosat, Kind::kFp32, Format::E5M2, Overflow::kNoSat)
    ->Apply(manual_time_ms);
BENCHMARK_CAPTURE(BM_Quantize, bf16_e4m3_satfinite, Kind::kBf16, Format::E4M3, Overflow::kSatFinite)
    ->Apply(manual_time_ms);
BENCHMARK_CAPTURE(BM_Quantize, fp32_e4m3_stochastic, Kind::kStochastic, Format::E4M3,
                  Overflow::kSatFinite)
    ->Apply(manual_time_ms);
BENCHMARK_CAPTURE(BM_Quantize, mxfp8_1x32_te_e4m3, Kind::kMxRowwise, Format::E4M3,
                  Overflow::kSatFinite)
    ->Apply(manual_time_ms);
BENCHMARK_CAPTURE(BM_Quantize, block_1x128_te_e4m3, Kind::kBlock1x128, Format::E4M3,
                  Overflow::kSatFinite)
    ->Apply(manual_time_ms);
BENCHMARK_CAPTURE(BM_Quantize, current_te_e4m3, Kind::kCurrentTe, Format::E4M3,
                  Overflow::kSatFinite)
    ->Apply(manual_time_ms);
BENCHMARK_CAPTURE(BM_Quantize, fp32_e4m3_transpose_8192x8192, Kind::kTranspose, Format::E4M3,
                  Overflow::kSatFinite)
    ->Apply(manual_time_ms);

}  // namespace
}  // namespace fp8lab::bench
