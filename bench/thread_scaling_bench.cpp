// A whole training step (forward, backward, AdamW) at 2 threads over the same step at 1 thread, in
// the same process with the steps interleaved (1, 2, 1, 2, ...), so that a change of machine load
// falls on both arms alike (issue 21: goal >= 1.7x). The threads are the sim backend's
// (experiments/linear/cuda_backend.hpp, BackendChoice::threads); LibTorch's own ops stay on one
// thread, as in fp8lab runs (experiments/run/run_executor.hpp: use_one_torch_thread).
// Counters: step_1t_s, step_2t_s (median wall-clock step of each arm), speedup = step_1t_s /
// step_2t_s; cpu_1t_s, cpu_2t_s (mean process CPU time per step: on a machine shared with other
// jobs the 2-thread arm's wall clock suffers more than the 1-thread arm's, and its CPU time shows
// whether the second core was busy or waiting); gemm_share_1t and quantize_share_1t (the
// 1-thread step's fractions in backend GEMMs and quantizers, the parts the threads split) and
// amdahl_2t = 1 / (1 - (g + q) / 2), the speed-up perfect 2-thread GEMMs and quantizers would
// give: the ceiling while LibTorch's own ops run on one thread; and per arm the mean seconds per
// step inside each GEMM role (fprop_1t_s, ..., wgrad_2t_s), the quantizers (quantize_1t_s,
// quantize_2t_s) and the rest of the step (rest_1t_s, rest_2t_s): which part the second thread
// shortens (the 2-thread arm's dgrad and wgrad overlap, so its rest_2t_s understates the rest).
// Operand statistics off, as in a run's unlogged steps. The workload is FP8LAB_BENCH_WORKLOAD (default llama-xs).
//
//   build/bench/thread_scaling_bench --benchmark_min_time=5
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_main.hpp"
#include "bench/step_trainer.hpp"
#include "bench/timing.hpp"
#include "experiments/linear/backend_linear.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::bench {
namespace {

namespace ex = experiments;
namespace rc = recipes;

std::string workload_name() { return bench_workload("llama-xs"); }

// The workload's model as a run trains it: FP8 Linears (or none, for the baseline) and the
// baseline's high-precision Linear for the rest, on the sim backend with `threads`.
// Without the operand statistics (measure_quantization), as on every step of a run but the
// logged ones and in its speed probe (experiments/run/run_executor.cpp, measure_operands).
StepTrainer make_trainer(const rc::Recipe* recipe, int threads) {
  return StepTrainer(workload_name(), [recipe, threads](ex::TrainableModel& model) {
    const auto backend = ex::make_backend({"sim", 0, threads});
    if (recipe != nullptr) ex::convert_model(model, *recipe, backend);
    ex::convert_model_to_high_precision(model, backend, ex::HighPrecision::fp32);
    ex::set_measure_operands(model, false);
  });
}

struct Arm {
  explicit Arm(StepTrainer t) : trainer(std::move(t)) {}
  StepTrainer trainer;
  std::vector<double> wall;
  double cpu = 0.0;

  void step() {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    trainer.step();
    cpu += process_cpu_seconds() - cpu_start;
    wall.push_back(seconds_since(start));
  }
  double median() {
    std::sort(wall.begin(), wall.end());
    return wall[wall.size() / 2];
  }
};

// An arm's mean seconds per step: the whole step, inside backend GEMMs (in total and per role)
// and inside quantizers.
struct Shares {
  double wall = 0.0, gemm = 0.0, quantize = 0.0;
  double role[3] = {0.0, 0.0, 0.0};
};
Shares shares(const Arm& arm, double steps) {
  Shares s;
  for (const double w : arm.wall) s.wall += w / steps;
  const auto backend = backend_seconds(*arm.trainer.model);
  s.gemm = backend.gemm / steps;
  s.quantize = backend.quantize / steps;
  for (std::size_t r = 0; r < 3; ++r) s.role[r] = backend.role[r] / steps;
  return s;
}

void run(benchmark::State& state, const rc::Recipe* recipe) {
  torch::set_num_threads(1);
  Arm one(make_trainer(recipe, 1)), two(make_trainer(recipe, 2));
  one.trainer.step();  // warm-up: caches, the GEMM worker pool
  two.trainer.step();
  ex::reset_linear_stats(*one.trainer.model);
  ex::reset_linear_stats(*two.trainer.model);
  for (auto _ : state) {
    one.step();
    two.step();
  }
  const auto steps = static_cast<double>(one.wall.size());
  const Shares s1 = shares(one, steps), s2 = shares(two, steps);
  const double g = s1.gemm / s1.wall, q = s1.quantize / s1.wall;
  const double m1 = one.median(), m2 = two.median();
  state.counters["step_1t_s"] = m1;
  state.counters["step_2t_s"] = m2;
  state.counters["speedup"] = m1 / m2;
  state.counters["cpu_1t_s"] = one.cpu / steps;
  state.counters["cpu_2t_s"] = two.cpu / steps;
  state.counters["gemm_share_1t"] = g;
  state.counters["quantize_share_1t"] = q;
  state.counters["amdahl_2t"] = 1.0 / (1.0 - (g + q) / 2.0);
  // Where the second thread went, per step and GEMM role: each arm's wall time inside the
  // backend's GEMMs and quantizers (mean per step), and the rest of the step.
  const char* roles[] = {"fprop", "dgrad", "wgrad"};
  for (std::size_t r = 0; r < 3; ++r) {
    state.counters[std::string(roles[r]) + "_1t_s"] = s1.role[r];
    state.counters[std::string(roles[r]) + "_2t_s"] = s2.role[r];
  }
  state.counters["quantize_1t_s"] = s1.quantize;
  state.counters["quantize_2t_s"] = s2.quantize;
  state.counters["rest_1t_s"] = s1.wall - s1.gemm - s1.quantize;
  state.counters["rest_2t_s"] = s2.wall - s2.gemm - s2.quantize;
  state.SetLabel(workload_name());
}

void register_all() {
  benchmark::RegisterBenchmark("threads/baseline_fp32", [](benchmark::State& s) {
    run(s, nullptr);
  })->Unit(benchmark::kMillisecond);
  for (const rc::Scaling scaling :
       {rc::Scaling::delayed, rc::Scaling::current, rc::Scaling::mxfp8, rc::Scaling::block}) {
    benchmark::RegisterBenchmark(("threads/fp8_" + std::string(rc::name(scaling))).c_str(),
                                 [scaling](benchmark::State& s) {
                                   static const rc::Recipe recipe =
                                       rc::recipe_with_defaults(scaling);
                                   run(s, &recipe);
                                 })
        ->Unit(benchmark::kMillisecond);
  }
}

[[maybe_unused]] const bool registered = add_rows(register_all);

}  // namespace
}  // namespace fp8lab::bench
