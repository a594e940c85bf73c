// Every scaling recipe of sim/scaling/ quantizing one 4096 x 4096 fp32 tensor (64 MiB), next to a
// memcpy of the same 64 MiB measured in the same process. Each row reports GBps (input bytes over
// the fastest iteration's wall clock), memcpy_GBps (the fastest of repeated memcpys, measured
// once) and x_memcpy (the ratio). Single-threaded, like the recipes. NVFP4's two element-wise
// stages are measured alone on the same input: the 16-point RHT (sim/rht.hpp, along the rows as TE
// applies it) and E2M1 stochastic rounding (sim/fp4_stochastic.hpp); issue 46 asks >= 0.5 of
// memcpy for each. The sub-byte quantizers whole: MXFP4 (TE's E8M0 rule, rows and columns) and
// NVFP4 te (1 x 16, 16 x 1, and 16 x 1 with stochastic rounding, as TE's wgrad grad_output).
// Tseng et al.'s MXFP4 backward (sim/scaling/mx_dither.hpp): the 64-point RHT and the
// 'dither_scale' quantizer alone, each along the rows (Arg 0) and down the columns (Arg 1).
//
//   build-*/bench/scaling_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cstring>
#include <functional>
#include <vector>

#include "bench/cpu_input.hpp"
#include "sim/fp4_stochastic.hpp"
#include "sim/rht.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/mx_dither.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/scaling/rowwise.hpp"

namespace {

namespace sc = fp8lab::sim::scaling;
using fp8lab::sim::Format;

using fp8lab::bench::kInputBytes;
constexpr std::int64_t kRows = fp8lab::bench::kInputRows;
constexpr std::int64_t kCols = fp8lab::bench::kInputCols;

double memcpy_bytes_per_second() { return kInputBytes / fp8lab::bench::input_memcpy_seconds(); }

using Recipe = std::function<sc::QuantizeResult(const std::vector<float>&)>;

void run(benchmark::State& state, const Recipe& recipe) {
  const std::vector<float>& x = fp8lab::bench::normal_input();
  const double baseline = memcpy_bytes_per_second();
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    sc::QuantizeResult r = recipe(x);
    benchmark::DoNotOptimize(r.tensor.data.data());
  });
  const double rate = kInputBytes / best;
  state.counters["GBps"] = rate / 1e9;
  state.counters["memcpy_GBps"] = baseline / 1e9;
  state.counters["x_memcpy"] = rate / baseline;
}

void BM_memcpy(benchmark::State& state) {
  const std::vector<float>& x = fp8lab::bench::normal_input();
  std::vector<float> y(x.size());
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] {
    std::memcpy(y.data(), x.data(), x.size() * sizeof(float));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  });
  state.counters["GBps"] = kInputBytes / best / 1e9;
  state.counters["x_memcpy"] = (kInputBytes / best) / memcpy_bytes_per_second();
}

void BM_delayed(benchmark::State& state) {
  sc::DelayedScalingState delayed(1, Format::E4M3, sc::DelayedScalingConfig{});
  run(state, [&](const std::vector<float>& x) { return delayed.quantize(0, x, kRows, kCols); });
}

void BM_current_te(benchmark::State& state) {
  run(state, [](const std::vector<float>& x) {
    return sc::quantize_current_te(x, kRows, kCols, Format::E4M3);
  });
}

void BM_tensorwise_torchao(benchmark::State& state) {
  run(state, [](const std::vector<float>& x) {
    return sc::quantize_tensorwise_torchao(x, kRows, kCols, Format::E4M3);
  });
}

void BM_axiswise_torchao(benchmark::State& state) {
  const auto axis = state.range(0) == 0 ? sc::ScaleAxis::kRowwise : sc::ScaleAxis::kColumnwise;
  state.SetLabel(sc::to_string(axis));
  run(state, [axis](const std::vector<float>& x) {
    return sc::quantize_axiswise_torchao(x, kRows, kCols, axis, Format::E4M3, true);
  });
}

void BM_block_te(benchmark::State& state) {
  const sc::BlockShape shapes[] = {sc::kBlock1x128, sc::kBlock128x1, sc::kBlock128x128};
  sc::BlockScalingConfig config;
  config.block = shapes[state.range(0)];
  state.SetLabel(std::to_string(config.block.rows) + "x" + std::to_string(config.block.cols));
  run(state, [config](const std::vector<float>& x) {
    return sc::quantize_block_te(x, kRows, kCols, Format::E4M3, config);
  });
}

void BM_mx(benchmark::State& state) {
  const auto mode = static_cast<sc::E8M0Mode>(state.range(0));
  const auto axis = state.range(1) == 0 ? sc::ScaleAxis::kRowwise : sc::ScaleAxis::kColumnwise;
  state.SetLabel(std::string(sc::to_string(mode)) + " " + sc::to_string(axis));
  run(state, [mode, axis](const std::vector<float>& x) {
    return sc::quantize_mx(x, kRows, kCols, axis, Format::E4M3, mode);
  });
}

void BM_mx_2d(benchmark::State& state) {
  run(state, [](const std::vector<float>& x) {
    return sc::quantize_mx_2d(x, kRows, kCols, Format::E4M3);
  });
}

// A stage writing its own output (no QuantizeResult): the same counters as run().
template <typename Stage>
void run_stage(benchmark::State& state, Stage stage) {
  const std::vector<float>& x = fp8lab::bench::normal_input();
  const double baseline = memcpy_bytes_per_second();
  const double best = fp8lab::bench::best_iteration_seconds(state, [&] { stage(x); });
  const double rate = kInputBytes / best;
  state.counters["GBps"] = rate / 1e9;
  state.counters["memcpy_GBps"] = baseline / 1e9;
  state.counters["x_memcpy"] = rate / baseline;
}

void BM_rht(benchmark::State& state) {
  std::vector<float> y(static_cast<std::size_t>(kRows * kCols));
  run_stage(state, [&](const std::vector<float>& x) {
    fp8lab::sim::random_hadamard_transform_bf16(x, kRows, kCols, fp8lab::sim::RhtAxis::kRows,
                                                fp8lab::sim::kTeRhtSignMask, y);
    benchmark::DoNotOptimize(y.data());
  });
}

void BM_e2m1_stochastic(benchmark::State& state) {
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(kRows * kCols));
  run_stage(state, [&](const std::vector<float>& x) {
    fp8lab::sim::e2m1_stochastic_codes(x, 1, 2, 0, codes);
    benchmark::DoNotOptimize(codes.data());
  });
}

// Arg 0: chunks along the rows (kRowwise), 1: down the columns (kColumnwise).
void BM_mx_rht(benchmark::State& state) {
  const auto axis = state.range(0) == 0 ? sc::ScaleAxis::kRowwise : sc::ScaleAxis::kColumnwise;
  state.SetLabel(sc::to_string(axis));
  const std::uint64_t signs = sc::mx_rht_sign_mask(1, 2, 0);
  std::vector<float> y(static_cast<std::size_t>(kRows * kCols));
  run_stage(state, [&](const std::vector<float>& x) {
    sc::mx_rht_bf16(x, kRows, kCols, axis, signs, y);
    benchmark::DoNotOptimize(y.data());
  });
}

void BM_mx_dither(benchmark::State& state) {
  const auto axis = state.range(0) == 0 ? sc::ScaleAxis::kRowwise : sc::ScaleAxis::kColumnwise;
  state.SetLabel(sc::to_string(axis));
  const sc::StochasticStream stream{1, 2};
  run(state, [&](const std::vector<float>& x) {
    return sc::quantize_mx_dither_scale(x, kRows, kCols, axis, stream);
  });
}

void BM_mxfp4(benchmark::State& state) {
  const auto axis = state.range(0) == 0 ? sc::ScaleAxis::kRowwise : sc::ScaleAxis::kColumnwise;
  state.SetLabel(sc::to_string(axis));
  run(state, [axis](const std::vector<float>& x) {
    return sc::quantize_mx(x, kRows, kCols, axis, Format::E2M1);
  });
}

// Arg 0: 1 x 16, 1: 16 x 1, 2: 16 x 1 with stochastic rounding.
void BM_nvfp4_te(benchmark::State& state) {
  const sc::BlockShape block = state.range(0) == 0 ? sc::BlockShape{1, sc::kNvfp4BlockSize}
                                                   : sc::BlockShape{sc::kNvfp4BlockSize, 1};
  const bool stochastic = state.range(0) == 2;
  state.SetLabel(std::to_string(block.rows) + "x" + std::to_string(block.cols) +
                 (stochastic ? " sr" : ""));
  const sc::StochasticStream stream{1, 2};
  run(state, [&](const std::vector<float>& x) {
    return sc::quantize_nvfp4(x, kRows, kCols, block, sc::Nvfp4Mode::kTe,
                              stochastic ? &stream : nullptr);
  });
}

}  // namespace

BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_delayed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_current_te)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_tensorwise_torchao)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_axiswise_torchao)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_block_te)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mx)
    ->Args({static_cast<int>(sc::E8M0Mode::kTe), 0})
    ->Args({static_cast<int>(sc::E8M0Mode::kTe), 1})
    ->Args({static_cast<int>(sc::E8M0Mode::kFloor), 0})
    ->Args({static_cast<int>(sc::E8M0Mode::kRceil), 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mx_2d)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rht)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_e2m1_stochastic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mx_rht)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mx_dither)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mxfp4)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_nvfp4_te)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
