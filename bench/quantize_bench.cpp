// Fused quantize + amax (sim/quantize.hpp, the Highway bulk path) on one core, in GB/s of input
// read, next to memcpy of the same input measured in the same benchmark run.
//   build-<you>/bench/quantize_bench [--benchmark_filter=...]
// Counters: GB/s (input bytes read by quantize per second), memcpy_GB/s (memcpy of the same bytes
// into a separate buffer, timed over the same number of iterations right after), ratio = the two
// divided (issue 21: fp32 >= 0.8, bf16 >= 0.5, stochastic >= 0.4), and the SIMD target chosen.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <span>
#include <vector>

#include "bench/cpu_input.hpp"
#include "sim/quantize.hpp"

namespace {

using fp8lab::sim::Format;
using fp8lab::sim::Overflow;

// Seconds per memcpy of `bytes`, averaged over `iterations` copies.
double memcpy_seconds(const void* source, std::size_t bytes, std::int64_t iterations) {
  std::vector<unsigned char> destination(bytes, 1);  // touched: no page faults in the timing
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < iterations; ++i) {
    std::memcpy(destination.data(), source, bytes);
    benchmark::DoNotOptimize(destination.data());
    benchmark::ClobberMemory();
  }
  return fp8lab::bench::seconds_since(start) / static_cast<double>(iterations);
}

void report(benchmark::State& state, const void* input, std::size_t input_bytes,
            double quantize_seconds_per_iteration) {
  const double memcpy_per_iteration = memcpy_seconds(input, input_bytes, state.iterations());
  const double gb = static_cast<double>(input_bytes) * 1e-9;
  state.counters["GB/s"] = gb / quantize_seconds_per_iteration;
  state.counters["memcpy_GB/s"] = gb / memcpy_per_iteration;
  state.counters["ratio"] = memcpy_per_iteration / quantize_seconds_per_iteration;
  state.SetLabel(fp8lab::sim::bulk_target_name());
}

// Times quantize(x, codes) over x (fp32, or bf16 bits) and reports it: every quantize benchmark's
// loop, written once.
template <class T, class Quantize>
void time_quantize(benchmark::State& state, const std::vector<T>& x, Quantize quantize) {
  std::vector<std::uint8_t> q(x.size(), 0);
  fp8lab::sim::QuantizeStats stats;
  const double seconds = fp8lab::bench::mean_iteration_seconds(state, [&] {
    stats = quantize(x, std::span<std::uint8_t>(q));
    benchmark::DoNotOptimize(stats);
    benchmark::ClobberMemory();
  });
  report(state, x.data(), x.size() * sizeof(T), seconds);
}

void BM_QuantizeF32(benchmark::State& state, Format format) {
  time_quantize(state, fp8lab::bench::normal_input(),
                [format](const std::vector<float>& in, std::span<std::uint8_t> q) {
                  return fp8lab::sim::quantize(in, 0.5f, format, Overflow::kSatFinite, q);
                });
}

void BM_QuantizeBF16(benchmark::State& state, Format format) {
  const std::vector<float>& values = fp8lab::bench::normal_input();
  std::vector<std::uint16_t> x(values.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = fp8lab::sim::fp32_to_bf16(values[i]);
  time_quantize(state, x,
                [format](const std::vector<std::uint16_t>& in, std::span<std::uint8_t> q) {
                  return fp8lab::sim::quantize_bf16(in, 0.5f, format, Overflow::kSatFinite, q);
                });
}

// Stochastic rounding (one Philox4x32-10 block per four elements; issue 21 asked >= 0.4 of
// memcpy, issue 46 >= 0.5).
void BM_QuantizeStochasticF32(benchmark::State& state, Format format) {
  time_quantize(state, fp8lab::bench::normal_input(),
                [format](const std::vector<float>& in, std::span<std::uint8_t> q) {
                  return fp8lab::sim::quantize_stochastic(in, 0.5f, format, Overflow::kSatFinite, 1,
                                                          2, 0, q);
                });
}

}  // namespace

BENCHMARK_CAPTURE(BM_QuantizeF32, e4m3, Format::E4M3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizeF32, e5m2, Format::E5M2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizeBF16, e4m3, Format::E4M3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizeBF16, e5m2, Format::E5M2)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_CAPTURE(BM_QuantizeStochasticF32, e4m3, Format::E4M3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_QuantizeStochasticF32, e5m2, Format::E5M2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
