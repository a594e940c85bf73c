// GPU GEMMs in FLOP/s against peaks computed from the device's properties, in the same run:
// - our fp32_seq kernel (gpu/gemm/fp32_seq.cu), 4096^3 per-tensor E4M3, against the FP32 SIMT
//   peak = SMs x clock x 128 FP32 FMA per SM per clock x 2 FLOP (sm_90: 4 x 32 FP32 lanes per SM);
// - cuBLASLt FP8 (E4M3 x E4M3 -> bf16, tensorwise), 8192^3, fast accumulation on and off, against
//   the dense FP8 tensor-core peak = SMs x clock x 8192 FLOP per SM per clock (sm_90: 4 tensor
//   cores x 1024 dense FP8 FMA per clock x 2 FLOP; NVIDIA's 1979 TFLOP/s for H100/H200 SXM is
//   this at 1.83 GHz). Goal: >= 0.6 of that peak.
// Counters: TFLOP_per_s (or GFLOP_per_s), peak, ratio_vs_peak. Operands are pseudo-random codes.
#include <cstdint>
#include <vector>

#include "bench/gpu_bench_util.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gemm/gemm.hpp"

namespace fp8lab::bench {
namespace {

__global__ void fill_codes_kernel(std::uint8_t* codes, std::int64_t n, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 0x9E3779B9u ^ seed;
    h ^= h >> 16; h *= 0x7FEB352Du; h ^= h >> 15;
    // E4M3 codes with exponent fields 4..10 (values 2^-3 .. 2^3), either sign: never NaN.
    codes[i] = static_cast<std::uint8_t>((h & 0x80u) | ((4u + (h >> 8) % 7u) << 3) | ((h >> 4) & 7u));
  }
}

void BM_Fp32SeqGemm(benchmark::State& state) {
  if (!have_device(state)) return;
  const std::int64_t n = state.range(0);
  gpu::DeviceBuffer<std::uint8_t> a(n * n), b(n * n);
  gpu::DeviceBuffer<float> scale(std::vector<float>{1.0f}), out(n * n);
  fill_codes_kernel<<<1024, 256>>>(a.get(), n * n, 1);
  fill_codes_kernel<<<1024, 256>>>(b.get(), n * n, 2);
  const gpu::DeviceGemmOperand da{a.get(), scale.get(), n, n, n, n, sim::Format::E4M3, true};
  const gpu::DeviceGemmOperand db{b.get(), scale.get(), n, n, n, n, sim::Format::E4M3, true};
  auto run = [&] { gpu::gemm(da, db, {}, out.get()); };
  run();
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = device_seconds(run);
    state.SetIterationTime(s);
    seconds += s;
  }
  const DeviceFigures d = device_figures();
  const double flops = 2.0 * static_cast<double>(n) * n * n * static_cast<double>(state.iterations());
  const double peak = d.sms * d.clock_hz * 128.0 * 2.0;
  state.counters["GFLOP_per_s"] = flops / seconds * 1e-9;
  state.counters["fp32_simt_peak_GFLOP_per_s"] = peak * 1e-9;
  state.counters["ratio_vs_peak"] = flops / seconds / peak;
  state.SetLabel(d.name + ", " + std::to_string(d.sms) + " SMs at " + std::to_string(d.clock_hz * 1e-6) + " MHz");
}
BENCHMARK(BM_Fp32SeqGemm)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_CublasLtFp8(benchmark::State& state) {
  if (!have_device(state)) return;
  const std::int64_t n = state.range(0);
  const bool fast = state.range(1) != 0;
  gpu::CublasLtGemmShape shape;
  shape.m = shape.n = shape.k = n;
  shape.fast_accum = fast;
  shape.bf16_output = true;
  gpu::DeviceBuffer<std::uint8_t> a(n * n), b(n * n);
  gpu::DeviceBuffer<std::uint16_t> out(n * n);
  gpu::DeviceBuffer<float> scale(std::vector<float>{1.0f});
  fill_codes_kernel<<<1024, 256>>>(a.get(), n * n, 3);
  fill_codes_kernel<<<1024, 256>>>(b.get(), n * n, 4);
  gpu::CublasLtFp8Gemm gemm(shape);
  auto run = [&] { gemm.run(a.get(), scale.get(), b.get(), scale.get(), out.get()); };
  run();
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = device_seconds(run, 5);
    state.SetIterationTime(s);
    seconds += s;
  }
  const DeviceFigures d = device_figures();
  const double flops = 2.0 * static_cast<double>(n) * n * n * static_cast<double>(state.iterations());
  const double peak = d.sms * d.clock_hz * 8192.0;
  state.counters["TFLOP_per_s"] = flops / seconds * 1e-12;
  state.counters["fp8_dense_peak_TFLOP_per_s"] = peak * 1e-12;
  state.counters["ratio_vs_peak"] = flops / seconds / peak;
  state.SetLabel(gemm.describe());
}
BENCHMARK(BM_CublasLtFp8)->Args({8192, 0})->Args({8192, 1})->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fp8lab::bench

BENCHMARK_MAIN();
