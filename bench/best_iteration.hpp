// The fastest iteration of a Google Benchmark loop, in wall-clock seconds. Best-of, like the
// baselines the benchmarks divide by, so that both sides of a ratio see the same noise filter on a
// shared machine, independent of how Google Benchmark accounts CPU time of worker threads.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

namespace fp8lab::bench {

template <typename Body>
double best_iteration_seconds(benchmark::State& state, Body body) {
  double best = 1e30;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    body();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace fp8lab::bench
