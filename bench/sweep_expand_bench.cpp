// Sweep expansion of the full TE grid of the seed's fields (issue 6 acceptance: "expands in well
// under a second"): 3 formats x 4 margins x 3 intervals x 4 history lengths x 2 algorithms x 8
// override triples x MXFP8 on/off = 4608 requested combinations -> 1701 distinct runs.
//
// Baseline, measured in the same run: materializing the same 4608 Recipe values with nested
// loops and plain field assignment (no settings, no canonicalization, no hashing, no dedup), the
// floor of any expansion that stores every request. Counters: ms per expansion (best iteration),
// baseline_ms, x_baseline (ratio), requested, runs.
//
//   build-*/bench/sweep_expand_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/timing.hpp"

#include "recipes/sweep.hpp"

namespace {

using namespace fp8lab::recipes;

// The shipped grid (FP8LAB_SOURCE_DIR from bench/CMakeLists.txt), read once: parsing is timed,
// file I/O is not.
const std::string kGridFile = std::string(FP8LAB_SOURCE_DIR) + "/recipes/sweeps/te-full-grid.yaml";

std::string grid_text() {
  std::ifstream in(kGridFile);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty()) throw std::runtime_error("cannot read " + kGridFile);
  return text.str();
}

std::vector<Recipe> enumerate_plainly() {
  std::vector<Recipe> out;
  out.reserve(4608);
  for (Fp8Format f : {Fp8Format::kHybrid, Fp8Format::kE4M3, Fp8Format::kE5M2}) {
    for (std::int64_t margin : {0, 1, 2, 3}) {
      for (std::int64_t interval : {1, 2, 4}) {
        for (std::int64_t history : {1, 16, 128, 1024}) {
          for (AmaxComputeAlgo algo : {AmaxComputeAlgo::kMax, AmaxComputeAlgo::kMostRecent}) {
            for (int triple = 0; triple < 8; ++triple) {
              for (bool mx : {false, true}) {
                Recipe r;
                r.scaling = mx ? Scaling::mxfp8 : Scaling::delayed;
                r.fp8_format = f;
                r.margin = margin;
                r.interval = interval;
                r.amax_history_len = history;
                r.amax_compute_algo = algo;
                r.override_linear_precision = {(triple & 4) != 0, (triple & 2) != 0,
                                               (triple & 1) != 0};
                out.push_back(std::move(r));
              }
            }
          }
        }
      }
    }
  }
  return out;
}

double baseline_seconds() {
  static const double seconds = fp8lab::bench::best_of_seconds(20, 0.0, [] {
    auto recipes = enumerate_plainly();
    benchmark::DoNotOptimize(recipes.data());
  });
  return seconds;
}

void report(benchmark::State& state, double seconds, const SweepExpansion& e) {
  state.counters["ms"] = seconds * 1e3;
  state.counters["baseline_ms"] = baseline_seconds() * 1e3;
  state.counters["x_baseline"] = seconds / baseline_seconds();
  state.counters["requested"] = static_cast<double>(e.requested.size());
  state.counters["runs"] = static_cast<double>(e.runs.size());
}

void BM_expand_full_te_grid(benchmark::State& state) {
  const Sweep sweep = parse_sweep_text(grid_text(), kGridFile);
  SweepExpansion e;
  const double seconds = fp8lab::bench::best_iteration_seconds(state, [&] {
    e = expand(sweep);
    benchmark::DoNotOptimize(e.runs.data());
  });
  report(state, seconds, e);
}

void BM_parse_and_expand_full_te_grid(benchmark::State& state) {
  const std::string text = grid_text();
  SweepExpansion e;
  const double seconds = fp8lab::bench::best_iteration_seconds(state, [&] {
    e = expand(parse_sweep_text(text, kGridFile));
    benchmark::DoNotOptimize(e.runs.data());
  });
  report(state, seconds, e);
}

void BM_enumerate_baseline(benchmark::State& state) {
  std::size_t n = 0;
  const double seconds = fp8lab::bench::best_iteration_seconds(state, [&] {
    auto recipes = enumerate_plainly();
    n = recipes.size();
    benchmark::DoNotOptimize(recipes.data());
  });
  state.counters["ms"] = seconds * 1e3;
  state.counters["requested"] = static_cast<double>(n);
}

}  // namespace

BENCHMARK(BM_enumerate_baseline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_expand_full_te_grid)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_parse_and_expand_full_te_grid)->Unit(benchmark::kMillisecond);