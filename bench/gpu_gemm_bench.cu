// GPU GEMMs in FLOP/s against peaks computed from the device's properties, in the same run:
// - our fp32_seq kernel (gpu/gemm/fp32_seq.cu), 4096^3 per-tensor E4M3, against the FP32 SIMT
//   peak = SMs x clock x 128 FP32 FMA per SM per clock x 2 FLOP (sm_90: 4 x 32 FP32 lanes per SM);
// - cuBLASLt FP8 (E4M3 x E4M3), 8192^3, against the dense FP8 tensor-core peak = SMs x clock x 8192
//   FLOP per SM per clock (sm_90: 4 tensor cores x 1024 dense FP8 FMA per clock x 2 FLOP; NVIDIA's
//   1979 TFLOP/s for H100/H200 SXM is this at 1.83 GHz). The clock is the device's maximum SM clock
//   (cudaDevAttrClockRate), so the ratio is against the best the chip can do, not the clock it ran
//   at (no NVML read: the benchmarks link only cudart and cuBLASLt). Goal: >= 0.6 of that peak.
//   Rows: tensorwise (fast accumulation on/off, bf16 and fp32 output, 32 and 128 MiB workspace),
//   rowwise (OUTER_VEC), block 1x128 x 128x128 and 1x128 x 1x128 (split accumulator only: cuBLASLt
//   refuses fast accumulation there). The algorithm is AUTOTUNED: up to 16 heuristic results are
//   each timed (1 warm-up + 5 calls) and the fastest is benchmarked (CublasLtFp8Gemm::autotune);
//   the heuristic's first choice, timed in the same autotuning, is reported beside it.
// Counters: TFLOP_per_s (or GFLOP_per_s), peak, ratio_vs_peak; cuBLASLt rows add candidates,
// chosen_heuristic_index and heuristic0_TFLOP_per_s / heuristic0_ratio_vs_peak. Operands are
// pseudo-random codes, scales 1.0.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/gpu_bench_util.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gemm/gemm.hpp"

namespace fp8lab::bench {
namespace {

// E4M3 codes with exponent fields 4..10 (values 2^-3 .. 2^3), either sign: never NaN.
struct E4m3Code {
  __device__ std::uint8_t operator()(std::uint32_t h) const {
    return static_cast<std::uint8_t>((h & 0x80u) | ((4u + (h >> 8) % 7u) << 3) | ((h >> 4) & 7u));
  }
};

void BM_Fp32SeqGemm(benchmark::State& state) {
  if (!have_device(state)) return;
  const std::int64_t n = state.range(0);
  gpu::DeviceBuffer<std::uint8_t> a(n * n), b(n * n);
  gpu::DeviceBuffer<float> scale(std::vector<float>{1.0f}), out(n * n);
  fill_hashed(a.get(), n * n, 1, E4m3Code{});
  fill_hashed(b.get(), n * n, 2, E4m3Code{});
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
  const double flops = 2.0 * static_cast<double>(n) * n * n *
                       static_cast<double>(state.iterations());
  const double peak = d.sms * d.clock_hz * 128.0 * 2.0;
  state.counters["GFLOP_per_s"] = flops / seconds * 1e-9;
  state.counters["fp32_simt_peak_GFLOP_per_s"] = peak * 1e-9;
  state.counters["ratio_vs_peak"] = flops / seconds / peak;
  state.SetLabel(d.name + ", " + std::to_string(d.sms) + " SMs at " +
                 std::to_string(d.clock_hz * 1e-6) + " MHz");
}
BENCHMARK(BM_Fp32SeqGemm)->Arg(4096)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

// Args: n, scaling (gpu::CublasLtScaling), fast_accum, bf16 output, workspace MiB.
void BM_CublasLtFp8(benchmark::State& state) {
  if (!have_device(state)) return;
  const std::int64_t n = state.range(0);
  gpu::CublasLtGemmShape shape;
  shape.m = shape.n = shape.k = n;
  shape.scaling = static_cast<gpu::CublasLtScaling>(state.range(1));
  shape.fast_accum = state.range(2) != 0;
  shape.bf16_output = state.range(3) != 0;
  shape.workspace_bytes = static_cast<std::size_t>(state.range(4)) << 20;
  gpu::DeviceBuffer<std::uint8_t> a(n * n), b(n * n);
  gpu::DeviceBuffer<std::uint16_t> out(static_cast<std::size_t>(n * n) *
                                       (shape.bf16_output ? 1 : 2));
  // Enough ones for every layout: at most n * roundup(ceil(n/128), 4) floats (1x128: n * n/128).
  const std::size_t scale_count = static_cast<std::size_t>(n) *
                                  static_cast<std::size_t>((n / 128 + 4) / 4 * 4);
  gpu::DeviceBuffer<float> scale(std::vector<float>(scale_count, 1.0f));
  fill_hashed(a.get(), n * n, 3, E4m3Code{});
  fill_hashed(b.get(), n * n, 4, E4m3Code{});
  std::unique_ptr<gpu::CublasLtFp8Gemm> gemm;
  std::vector<gpu::CublasLtCandidate> candidates;
  const gpu::CublasLtOperands operands{a.get(), scale.get(), b.get(), scale.get(), out.get()};
  try {
    gemm = std::make_unique<gpu::CublasLtFp8Gemm>(shape);
    candidates = gemm->autotune(operands, 16, 5);
  } catch (const std::exception& error) {
    state.SkipWithError((std::string("not run: ") + error.what()).c_str());
    return;
  }
  auto run = [&] { gemm->run(operands); };
  run();
  double seconds = 0.0;
  for (auto _ : state) {
    const double s = device_seconds(run, 5);
    state.SetIterationTime(s);
    seconds += s;
  }
  const DeviceFigures d = device_figures();
  const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) *
                      static_cast<double>(n);
  const double flops = flop * static_cast<double>(state.iterations());
  const double peak = d.sms * d.clock_hz * 8192.0;
  state.counters["TFLOP_per_s"] = flops / seconds * 1e-12;
  state.counters["fp8_dense_peak_TFLOP_per_s"] = peak * 1e-12;
  state.counters["ratio_vs_peak"] = flops / seconds / peak;
  state.counters["candidates"] = static_cast<double>(candidates.size());
  state.counters["chosen_heuristic_index"] = gemm->algorithm_index();
  if (candidates.front().milliseconds > 0.0) {
    const double heuristic0 = flop / (candidates.front().milliseconds * 1e-3);
    state.counters["heuristic0_TFLOP_per_s"] = heuristic0 * 1e-12;
    state.counters["heuristic0_ratio_vs_peak"] = heuristic0 / peak;
  }
  state.SetLabel(gemm->describe() + ", workspace " + std::to_string(state.range(4)) + " MiB");
}
BENCHMARK(BM_CublasLtFp8)
    ->ArgNames({"n", "scaling", "fast", "bf16", "ws_MiB"})
    ->Args({8192, 0, 0, 1, 32})
    ->Args({8192, 0, 1, 1, 32})
    ->Args({8192, 0, 0, 0, 32})
    ->Args({8192, 0, 1, 0, 32})
    ->Args({8192, 0, 1, 1, 128})
    ->Args({8192, 1, 0, 1, 32})
    ->Args({8192, 1, 1, 1, 32})
    ->Args({8192, 2, 0, 1, 32})
    ->Args({8192, 3, 0, 1, 32})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fp8lab::bench
