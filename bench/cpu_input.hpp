// The CPU quantize benchmarks' input (scaling_bench, torch_peer_bench, quantize_bench): 4096 x 4096
// fp32 values ~ N(0, 3^2) from mt19937(1), 64 MiB, far beyond L2; the same in every program and
// made once per process. And the memcpy of it that their rates divide by.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bench/timing.hpp"

namespace fp8lab::bench {

constexpr std::int64_t kInputRows = 4096;
constexpr std::int64_t kInputCols = 4096;
constexpr double kInputBytes = static_cast<double>(kInputRows * kInputCols) * sizeof(float);

inline const std::vector<float>& normal_input() {
  static const std::vector<float> x = [] {
    std::mt19937 gen(1);
    std::normal_distribution<float> dist(0.0f, 3.0f);
    std::vector<float> v(static_cast<std::size_t>(kInputRows * kInputCols));
    for (float& e : v) e = dist(gen);
    return v;
  }();
  return x;
}

// memcpy of the input into another buffer: the fastest of at least 5 copies and 0.3 s, measured
// once per process.
inline double input_memcpy_seconds() {
  static const double best = [] {
    const std::vector<float>& x = normal_input();
    std::vector<float> y(x.size());
    return best_of_seconds(5, 0.3, [&] {
      std::memcpy(y.data(), x.data(), x.size() * sizeof(float));
      benchmark::DoNotOptimize(y.data());
      benchmark::ClobberMemory();
    });
  }();
  return best;
}

}  // namespace fp8lab::bench
