// How every benchmark times: inside a Google Benchmark loop (each iteration timed on the wall
// clock) and outside one, for the baselines and peers a row divides by (memcpy, Eigen, torch ops,
// a plain loop), measured once per process. Best-of on both sides of a ratio, so that both see the
// same noise filter on a shared machine, independent of how Google Benchmark accounts the CPU time
// of worker threads.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace fp8lab::bench {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Process CPU time in seconds, all threads.
inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Runs the benchmark loop, timing each call of body; `record` gets each call's seconds.
template <typename Body, typename Record>
void time_iterations(benchmark::State& state, Body body, Record record) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    body();
    record(seconds_since(start));
  }
}

// The fastest iteration of the benchmark loop, in wall-clock seconds.
template <typename Body>
double best_iteration_seconds(benchmark::State& state, Body body) {
  double best = 1e30;
  time_iterations(state, body, [&](double s) { best = std::min(best, s); });
  return best;
}

// The mean iteration of the benchmark loop, in wall-clock seconds.
template <typename Body>
double mean_iteration_seconds(benchmark::State& state, Body body) {
  double total = 0.0;
  time_iterations(state, body, [&](double s) { total += s; });
  return total / static_cast<double>(state.iterations());
}

// A baseline or peer outside the benchmark loop: the fastest of at least `repetitions` calls of
// body that together take at least `min_seconds`.
template <typename Body>
double best_of_seconds(int repetitions, double min_seconds, Body body) {
  double best = 1e30, spent = 0.0;
  for (int rep = 0; rep < repetitions || spent < min_seconds; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    body();
    const double s = seconds_since(start);
    best = std::min(best, s);
    spent += s;
  }
  return best;
}

}  // namespace fp8lab::bench
