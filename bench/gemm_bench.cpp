// GEMM models of sim/gemm/ next to Eigen's fp32 GEMM on the same shape and thread count, measured
// in the same run. Each model row reports GFLOPS (2*M*N*K over the fastest iteration's wall
// clock), eigen_GFLOPS (Eigen's Y = X W^T, fastest of repeated runs, once per shape and thread
// count in this process) and x_eigen (the ratio). Eigen is compiled for the building machine's
// best ISA (-march=native on this file, bench/CMakeLists.txt) and multi-threads through OpenMP;
// the eigen_threads counter says how many threads it really used.
// Goals (issue 5): fp32_seq >= 0.5 x Eigen, hopper >= 0.1 x Eigen, at 1 and 2 threads.
//
// Shapes: 1024^3, and the default workload's Linear GEMMs (M = 256 tokens, K, N in {128, 512}).
//
//   build-*/bench/gemm_bench --benchmark_min_time=0.3
#include <benchmark/benchmark.h>

// GCC 12 reports _mm512_undefined_ps() inside Eigen's AVX-512 GEMM kernel as "may be used
// uninitialized" (a false positive of the intrinsic's self-initialization); the baseline only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <map>
#include <random>
#include <tuple>

#include "bench/timing.hpp"
#include "sim/cast.hpp"
#include "sim/gemm/block_scaled.hpp"
#include "sim/gemm/block_scaled_lanes.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/scaling/mx.hpp"

namespace {

using fp8lab::sim::Accumulation;
using fp8lab::sim::Format;
using fp8lab::sim::QuantizedTensor;
using fp8lab::sim::ReduceDim;

struct Shape {
  std::int64_t m, n, k;
};

Shape shape_of(const benchmark::State& state) {
  return {state.range(0), state.range(1), state.range(2)};
}
int threads_of(const benchmark::State& state) { return static_cast<int>(state.range(3)); }

double flops(const Shape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

// Eigen's Y[M,N] = X[M,K] W[N,K]^T; returns FLOP/s (best of repeated runs over ~0.3 s).
double eigen_flops_per_second(const Shape& s, int threads) {
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int>, double> cache;
  const auto key = std::tuple{s.m, s.n, s.k, threads};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Eigen::setNbThreads(threads);
  const Eigen::MatrixXf x = Eigen::MatrixXf::Random(s.m, s.k);
  const Eigen::MatrixXf w = Eigen::MatrixXf::Random(s.n, s.k);
  Eigen::MatrixXf y(s.m, s.n);
  const double best = fp8lab::bench::best_of_seconds(3, 0.3, [&] {
    y.noalias() = x * w.transpose();
    benchmark::DoNotOptimize(y.data());
  });
  return cache[key] = flops(s) / best;
}

void report(benchmark::State& state, const Shape& s, int threads, double best_seconds) {
  const double rate = flops(s) / best_seconds;
  const double eigen = eigen_flops_per_second(s, threads);
  state.counters["GFLOPS"] = rate * 1e-9;
  state.counters["eigen_GFLOPS"] = eigen * 1e-9;
  state.counters["eigen_threads"] = Eigen::nbThreads();
  state.counters["x_eigen"] = rate / eigen;
}

QuantizedTensor random_fp8(std::mt19937& rng, std::int64_t rows, std::int64_t cols,
                           std::int64_t block_cols) {
  QuantizedTensor t;
  t.rows = rows;
  t.cols = cols;
  t.format = Format::E4M3;
  t.block_rows = block_cols == cols ? rows : 1;
  t.block_cols = block_cols;
  std::normal_distribution<float> normal(0.0f, 64.0f);
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    t.data.push_back(fp8lab::sim::cast_fp32_to_fp8(normal(rng), Format::E4M3,
                                                   fp8lab::sim::Overflow::kSatFinite));
  }
  t.scale_inv.assign(static_cast<std::size_t>(t.scale_rows() * t.scale_cols()), 1.0f / 64.0f);
  return t;
}

// fprop-shaped GEMM of a model: X [M,K] rowwise, W [N,K]; block 0 = per-tensor, else 1 x block.
void BM_Model(benchmark::State& state, Accumulation model, std::int64_t block) {
  const Shape s = shape_of(state);
  const int threads = threads_of(state);
  std::mt19937 rng(42);
  const auto x = random_fp8(rng, s.m, s.k, block == 0 ? s.k : block);
  const auto w = random_fp8(rng, s.n, s.k, block == 0 ? s.k : block);
  fp8lab::sim::GemmOptions options;
  options.accumulation = model;
  options.threads = threads;
  std::vector<float> y(static_cast<std::size_t>(s.m * s.n));
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    fp8lab::sim::gemm_into({x, ReduceDim::kCols}, {w, ReduceDim::kCols}, options, y);
    benchmark::DoNotOptimize(y.data());
  });
  report(state, s, threads, best);
}

// blackwell_block (sim/gemm/block_scaled.hpp) on the same shapes: X [M,K] and W [N,K] as random
// codes of `format` with UE8M0 scales per 32 (MX) or UE4M3 per 16 (NVFP4) near 1, on `path`
// (kAuto: mxf4nvf4 for E2M1 x E2M1, else mxf8f6f4). Issue 46 asks >= 0.3 x Eigen at 256x512x512,
// 1 thread, for NVFP4 (mxf4nvf4) and MXFP8/MXFP4 (mxf8f6f4). `quantized` (the *_quantized rows):
// X and W instead as an MX quantizer stores normal values (sim/scaling/mx.hpp, TE's scales, 1 x
// 32 blocks along K; each row's standard deviation 2^u, u uniform in [-4, 4]), which are not
// spread over every code as random codes are. mxf8f6f4 rows also report exact_steps: the share
// of the lanes' micro-tile steps that took the exact way (block_scaled_lanes.hpp), and
// fp32_steps, the share that took it with fp32 sums.
void BM_BlockScaled(benchmark::State& state, Format format, fp8lab::sim::BlockScaleType type,
                    fp8lab::sim::BlockScaledPath path, bool quantized) {
  const Shape s = shape_of(state);
  const int threads = threads_of(state);
  const std::int64_t block = type == fp8lab::sim::BlockScaleType::kUe4m3 ? 16 : 32;
  std::mt19937 rng(44);
  std::vector<std::uint8_t> scale_bytes;  // the last quantized operand's scales
  const auto mx_codes = [&](std::int64_t rows) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> octave(-4.0f, 4.0f);
    std::vector<float> x(static_cast<std::size_t>(rows * s.k));
    for (std::int64_t r = 0; r < rows; ++r) {
      const float sd = std::exp2(octave(rng));
      for (std::int64_t i = 0; i < s.k; ++i)
        x[static_cast<std::size_t>(r * s.k + i)] = sd * normal(rng);
    }
    const auto q = fp8lab::sim::scaling::quantize_mx(
        x, rows, s.k, fp8lab::sim::scaling::ScaleAxis::kRowwise, format);
    scale_bytes = q.tensor.scale_e8m0;
    return q.tensor.data;
  };
  const auto codes = [&](std::int64_t rows) {
    if (quantized) return mx_codes(rows);
    std::vector<std::uint8_t> c(static_cast<std::size_t>(rows * s.k));
    const int bits = fp8lab::sim::spec(format).total_bits();
    for (auto& v : c) {
      v = static_cast<std::uint8_t>(rng() & ((1u << bits) - 1));
      if (bits == 8 && (v & 0x7F) == 0x7F) v = 0x7E;  // no E4M3 NaN
    }
    return c;
  };
  const auto scales = [&](std::int64_t rows) {
    if (quantized) return scale_bytes;
    std::vector<std::uint8_t> c(static_cast<std::size_t>(rows * s.k / block));
    for (auto& v : c) v = static_cast<std::uint8_t>((block == 16 ? 0x30 : 120) + rng() % 12);
    return c;
  };
  const auto xc = codes(s.m), xs = scales(s.m), wc = codes(s.n), ws = scales(s.n);
  const fp8lab::sim::BlockScaledOperand x{xc, xs, s.m, s.k, format, block, type};
  const fp8lab::sim::BlockScaledOperand w{wc, ws, s.n, s.k, format, block, type};
  fp8lab::sim::BlockScaledGemmOptions options;
  options.threads = threads;
  options.path = path;
  std::vector<float> y(static_cast<std::size_t>(s.m * s.n));
  const auto resolved = fp8lab::sim::resolve_block_scaled_path(x, w, path);
  if (resolved == fp8lab::sim::BlockScaledPath::kMxf8f6f4) {
    std::vector<std::uint8_t> left(y.size(), 0);
    fp8lab::sim::gemm_detail::BlockScaledLaneSteps steps;
    fp8lab::sim::gemm_detail::block_scaled_lanes(x, w, resolved, {}, threads, y, left, &steps);
    const auto all = static_cast<double>(steps.exact + steps.general);
    state.counters["exact_steps"] = static_cast<double>(steps.exact) / all;
    state.counters["fp32_steps"] = static_cast<double>(steps.narrow) / all;
  }
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    fp8lab::sim::block_scaled_gemm_into(x, w, options, y);
    benchmark::DoNotOptimize(y.data());
  });
  report(state, s, threads, best);
}

void BM_HighPrecision(benchmark::State& state, bool bf16) {
  const Shape s = shape_of(state);
  const int threads = threads_of(state);
  std::mt19937 rng(43);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(s.m * s.k)), w(static_cast<std::size_t>(s.n * s.k));
  for (auto& v : x) v = normal(rng);
  for (auto& v : w) v = normal(rng);
  fp8lab::sim::HighPrecisionGemmOptions options;
  options.round_operands_to_bf16 = bf16;
  options.threads = threads;
  std::vector<float> y(static_cast<std::size_t>(s.m * s.n));
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    fp8lab::sim::high_precision_gemm_into({x, s.m, s.k, ReduceDim::kCols},
                                          {w, s.n, s.k, ReduceDim::kCols}, options, y);
    benchmark::DoNotOptimize(y.data());
  });
  report(state, s, threads, best);
}

void BM_Eigen(benchmark::State& state) {
  const Shape s = shape_of(state);
  Eigen::setNbThreads(threads_of(state));
  const Eigen::MatrixXf x = Eigen::MatrixXf::Random(s.m, s.k);
  const Eigen::MatrixXf w = Eigen::MatrixXf::Random(s.n, s.k);
  Eigen::MatrixXf y(s.m, s.n);
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    y.noalias() = x * w.transpose();
    benchmark::DoNotOptimize(y.data());
  });
  state.counters["GFLOPS"] = flops(s) / best * 1e-9;
  state.counters["eigen_threads"] = Eigen::nbThreads();
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    b->Args({1024, 1024, 1024, threads});
    for (std::int64_t n : {128, 512}) {
      for (std::int64_t k : {128, 512}) b->Args({256, n, k, threads});
    }
  }
  b->ArgNames({"M", "N", "K", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Eigen)->Apply(shapes);
BENCHMARK_CAPTURE(BM_Model, fp32_seq, Accumulation::kFp32Seq, 0)->Apply(shapes);
BENCHMARK_CAPTURE(BM_Model, fp32_seq_mx32, Accumulation::kFp32Seq, 32)->Apply(shapes);
BENCHMARK_CAPTURE(BM_Model, hopper_split, Accumulation::kHopperSplitAccumulator, 0)->Apply(shapes);
BENCHMARK_CAPTURE(BM_Model, hopper_fast, Accumulation::kHopperFastAccum, 0)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockScaled, blackwell_mxfp8, Format::E4M3,
                  fp8lab::sim::BlockScaleType::kUe8m0, fp8lab::sim::BlockScaledPath::kAuto, false)
    ->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockScaled, blackwell_mxfp4, Format::E2M1,
                  fp8lab::sim::BlockScaleType::kUe8m0, fp8lab::sim::BlockScaledPath::kMxf8f6f4,
                  false)
    ->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockScaled, blackwell_nvfp4, Format::E2M1,
                  fp8lab::sim::BlockScaleType::kUe4m3, fp8lab::sim::BlockScaledPath::kAuto, false)
    ->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockScaled, blackwell_mxfp8_quantized, Format::E4M3,
                  fp8lab::sim::BlockScaleType::kUe8m0, fp8lab::sim::BlockScaledPath::kAuto, true)
    ->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockScaled, blackwell_mxfp6_e3m2_quantized, Format::E3M2,
                  fp8lab::sim::BlockScaleType::kUe8m0, fp8lab::sim::BlockScaledPath::kAuto, true)
    ->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockScaled, blackwell_mxfp4_quantized, Format::E2M1,
                  fp8lab::sim::BlockScaleType::kUe8m0, fp8lab::sim::BlockScaledPath::kMxf8f6f4,
                  true)
    ->Apply(shapes);
BENCHMARK_CAPTURE(BM_HighPrecision, fp32, false)->Apply(shapes);
BENCHMARK_CAPTURE(BM_HighPrecision, bf16, true)->Apply(shapes);

}  // namespace
