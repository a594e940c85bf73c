// fp8lab's quantizers and GEMM models beside their peers written in torch ops (LibTorch, CPU, one
// intra-op thread), measured in the same process. Every row reports its rate, the ratio to its
// limit and the ratio to its peer:
//   quantize rows (4096 x 4096 fp32, 64 MiB): GBps of input, x_memcpy (memcpy of the same bytes,
//     fastest of repeated copies), x_torch (the peer's time over ours: > 1 means fp8lab is faster);
//     peers: `x.to(torch::kFloat8_e4m3fn)` for the plain cast, a torchao-style tensorwise quantize
//     (amax, scale = 448 / amax, multiply, clamp, cast) and an MX 1x32 quantize (per-32 amax,
//     floor(log2 amax) - 8 as the e8m0 exponent, divide, clamp, cast), each in torch ops;
//   GEMM rows (fprop Y = X W^T of FP8 operands): GFLOPS, x_torch_fp32 (at::mm of the same fp32
//     shape, the limit) and x_torch (the peer: torchao's emulate path, dequantize both operands to
//     fp32 with their scales, then at::mm).
// The rows of the peers themselves are printed too (BM_torch_*), with their own ratio to the limit.
//
//   build/bench/torch_peer_bench --benchmark_min_time=0.3 --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "bench/cpu_input.hpp"
#include "sim/cast.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/quantize.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/mx.hpp"

namespace {

namespace sc = fp8lab::sim::scaling;
using fp8lab::sim::Format;

using fp8lab::bench::best_of_seconds;
using fp8lab::bench::input_memcpy_seconds;
using fp8lab::bench::kInputBytes;
constexpr std::int64_t kRows = fp8lab::bench::kInputRows, kCols = fp8lab::bench::kInputCols;
constexpr double kE4M3Max = 448.0;

void one_torch_thread() {
  static const bool done = [] {
    at::set_num_threads(1);
    return true;
  }();
  (void)done;
}

torch::Tensor input_tensor() {
  auto& x = const_cast<std::vector<float>&>(fp8lab::bench::normal_input());
  return torch::from_blob(x.data(), {kRows, kCols}, torch::kFloat32);
}

// The torch peers of the quantize rows, each returning the FP8 tensor (and its scales).
enum class Quantizer { kCast, kTensorwise, kMx };

torch::Tensor torch_quantize(Quantizer q, const torch::Tensor& x) {
  switch (q) {
    case Quantizer::kCast: return x.to(torch::kFloat8_e4m3fn);
    case Quantizer::kTensorwise: {
      const auto amax = x.abs().max().clamp_min(1e-12);
      const auto scale = kE4M3Max / amax;
      return (x * scale).clamp(-kE4M3Max, kE4M3Max).to(torch::kFloat8_e4m3fn);
    }
    case Quantizer::kMx: {
      const auto blocks = x.reshape({-1, 32});
      const auto amax = blocks.abs().amax(1, true).clamp_min(1e-30);
      const auto exponent = (torch::floor(torch::log2(amax)) - 8.0).clamp(-127.0, 127.0);
      const auto scaled = blocks / torch::exp2(exponent);
      return scaled.clamp(-kE4M3Max, kE4M3Max).to(torch::kFloat8_e4m3fn);
    }
  }
  return {};
}

double torch_quantize_seconds(Quantizer q) {
  static std::map<Quantizer, double> cache;
  if (auto it = cache.find(q); it != cache.end()) return it->second;
  one_torch_thread();
  const auto x = input_tensor();
  return cache[q] = best_of_seconds(3, 0.5, [&] {
           auto y = torch_quantize(q, x);
           benchmark::DoNotOptimize(y.data_ptr());
         });
}

void quantize_counters(benchmark::State& state, double seconds, double peer_seconds) {
  state.counters["GBps"] = kInputBytes / seconds * 1e-9;
  state.counters["x_memcpy"] = input_memcpy_seconds() / seconds;
  state.counters["x_torch"] = peer_seconds / seconds;
}

void BM_torch_quantize(benchmark::State& state, Quantizer q) {
  one_torch_thread();
  const auto x = input_tensor();
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    auto y = torch_quantize(q, x);
    benchmark::DoNotOptimize(y.data_ptr());
  });
  state.counters["GBps"] = kInputBytes / best * 1e-9;
  state.counters["x_memcpy"] = input_memcpy_seconds() / best;
}

void BM_sim_quantize(benchmark::State& state, Quantizer q) {
  const std::vector<float>& x = fp8lab::bench::normal_input();
  const double peer = torch_quantize_seconds(q);
  std::vector<std::uint8_t> codes(x.size());
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    switch (q) {
      case Quantizer::kCast: {
        // torch's cast does not saturate (overflow -> NaN): kNoSat, scale 1.
        auto stats =
            fp8lab::sim::quantize(x, 1.0f, Format::E4M3, fp8lab::sim::Overflow::kNoSat, codes);
        benchmark::DoNotOptimize(stats);
        break;
      }
      case Quantizer::kTensorwise: {
        auto r = sc::quantize_tensorwise_torchao(x, kRows, kCols, Format::E4M3);
        benchmark::DoNotOptimize(r.tensor.data.data());
        break;
      }
      case Quantizer::kMx: {
        auto r = sc::quantize_mx(x, kRows, kCols, sc::ScaleAxis::kRowwise, Format::E4M3,
                                 sc::E8M0Mode::kFloor);
        benchmark::DoNotOptimize(r.tensor.data.data());
        break;
      }
    }
    benchmark::ClobberMemory();
  });
  quantize_counters(state, best, peer);
}

// ---- GEMM -------------------------------------------------------------------------------------

struct Shape {
  std::int64_t m, n, k;
};
double flops(const Shape& s) {
  return 2.0 * static_cast<double>(s.m * s.n) * static_cast<double>(s.k);
}

fp8lab::sim::QuantizedTensor random_fp8(std::mt19937& rng, std::int64_t rows, std::int64_t cols) {
  fp8lab::sim::QuantizedTensor t;
  t.rows = rows;
  t.cols = cols;
  t.format = Format::E4M3;
  t.block_rows = rows;
  t.block_cols = cols;
  std::normal_distribution<float> normal(0.0f, 64.0f);
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    t.data.push_back(fp8lab::sim::cast_fp32_to_fp8(normal(rng), Format::E4M3,
                                                   fp8lab::sim::Overflow::kSatFinite));
  }
  t.scale_inv = {1.0f / 64.0f};
  return t;
}

torch::Tensor as_torch_fp8(fp8lab::sim::QuantizedTensor& t) {
  return torch::from_blob(t.data.data(), {t.rows, t.cols}, torch::kUInt8)
      .view(torch::kFloat8_e4m3fn);
}

// (torch fp32 at::mm seconds, torch dequantize + at::mm seconds) per shape, once per process.
std::pair<double, double> torch_gemm_seconds(const Shape& s) {
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::pair<double, double>>
      cache;
  const auto key = std::tuple{s.m, s.n, s.k};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  one_torch_thread();
  std::mt19937 rng(42);
  auto x = random_fp8(rng, s.m, s.k), w = random_fp8(rng, s.n, s.k);
  const auto x8 = as_torch_fp8(x), w8 = as_torch_fp8(w);
  const auto xf = x8.to(torch::kFloat32), wf = w8.to(torch::kFloat32);
  const double fp32 = best_of_seconds(3, 0.3, [&] {
    auto y = at::mm(xf, wf.t());
    benchmark::DoNotOptimize(y.data_ptr());
  });
  const double emulate = best_of_seconds(3, 0.3, [&] {
    auto y = at::mm(x8.to(torch::kFloat32) * x.scale_inv[0],
                    (w8.to(torch::kFloat32) * w.scale_inv[0]).t());
    benchmark::DoNotOptimize(y.data_ptr());
  });
  return cache[key] = {fp32, emulate};
}

void BM_torch_gemm(benchmark::State& state, bool emulate) {
  const Shape s{state.range(0), state.range(1), state.range(2)};
  one_torch_thread();
  std::mt19937 rng(42);
  auto x = random_fp8(rng, s.m, s.k), w = random_fp8(rng, s.n, s.k);
  const auto x8 = as_torch_fp8(x), w8 = as_torch_fp8(w);
  const auto xf = x8.to(torch::kFloat32), wf = w8.to(torch::kFloat32);
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    auto y = emulate ? at::mm(x8.to(torch::kFloat32) * x.scale_inv[0],
                              (w8.to(torch::kFloat32) * w.scale_inv[0]).t())
                     : at::mm(xf, wf.t());
    benchmark::DoNotOptimize(y.data_ptr());
  });
  state.counters["GFLOPS"] = flops(s) / best * 1e-9;
  state.counters["x_torch_fp32"] = torch_gemm_seconds(s).first / best;
}

void BM_sim_gemm(benchmark::State& state, fp8lab::sim::Accumulation model) {
  const Shape s{state.range(0), state.range(1), state.range(2)};
  const auto [fp32, emulate] = torch_gemm_seconds(s);
  std::mt19937 rng(42);
  const auto x = random_fp8(rng, s.m, s.k), w = random_fp8(rng, s.n, s.k);
  fp8lab::sim::GemmOptions options;
  options.accumulation = model;
  std::vector<float> y(static_cast<std::size_t>(s.m * s.n));
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    fp8lab::sim::gemm_into({x, fp8lab::sim::ReduceDim::kCols}, {w, fp8lab::sim::ReduceDim::kCols},
                           options, y);
    benchmark::DoNotOptimize(y.data());
  });
  state.counters["GFLOPS"] = flops(s) / best * 1e-9;
  state.counters["x_torch_fp32"] = fp32 / best;
  state.counters["x_torch"] = emulate / best;
}

// Every benchmark here: wall time (the torch and sim arms run threads), in milliseconds.
void real_time_ms(benchmark::internal::Benchmark* b) {
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void gemm_shapes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 1024, 1024})->Args({256, 512, 512})->Args({256, 128, 512});
  real_time_ms(b->ArgNames({"M", "N", "K"}));
}

}  // namespace

BENCHMARK_CAPTURE(BM_torch_quantize, cast, Quantizer::kCast)->Apply(real_time_ms);
BENCHMARK_CAPTURE(BM_sim_quantize, cast, Quantizer::kCast)->Apply(real_time_ms);
BENCHMARK_CAPTURE(BM_torch_quantize, tensorwise, Quantizer::kTensorwise)->Apply(real_time_ms);
BENCHMARK_CAPTURE(BM_sim_quantize, tensorwise, Quantizer::kTensorwise)->Apply(real_time_ms);
BENCHMARK_CAPTURE(BM_torch_quantize, mx_1x32, Quantizer::kMx)->Apply(real_time_ms);
BENCHMARK_CAPTURE(BM_sim_quantize, mx_1x32, Quantizer::kMx)->Apply(real_time_ms);
BENCHMARK_CAPTURE(BM_torch_gemm, fp32_mm, false)->Apply(gemm_shapes);
BENCHMARK_CAPTURE(BM_torch_gemm, dequantize_mm, true)->Apply(gemm_shapes);
BENCHMARK_CAPTURE(BM_sim_gemm, hopper_split, fp8lab::sim::Accumulation::kHopperSplitAccumulator)
    ->Apply(gemm_shapes);
BENCHMARK_CAPTURE(BM_sim_gemm, fp32_seq, fp8lab::sim::Accumulation::kFp32Seq)->Apply(gemm_shapes);
