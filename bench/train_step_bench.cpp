// One training step (forward, backward, AdamW) of a workload with emulated FP8 Linears over the
// same step with plain LibTorch FP32 Linears, measured in the same run (issue 9 benchmark note;
// goal: at most 3x). Rows:
//   torch_fp32              torch::nn::Linear (the reference the ratios divide by)
//   baseline_<fp32|bf16>    HighPrecisionLinear: the sim backend's deterministic high-precision GEMM
//   fp8_<recipe>            convert_model with the recipe on the sim backend (+ HighPrecisionLinear
//                           for the Linears its filter skips), inside ContextualFp8Autocast, every
//                           Linear measuring its operands (a statistics step: --layer-stats-every)
//   fp8_<recipe>_unlogged   the same with no operand statistics, as a run's steps between its
//                           statistics steps (most of a run: 290 of the default sweep's 300)
//   fp4_<recipe>[_fp32_seq]_unlogged  MXFP4, NVFP4 te (2-D weights) and NVFP4 te + RHT + SR on their
//                           default GEMM model (blackwell_block), or on fp32_seq
// Counters: step_s (mean wall-clock step over the timed iterations), fp32_step_s (torch_fp32's mean
// step, measured once per process before the first row that needs it, after warm-up steps up to
// the first that faults no page: fp32_warmup_steps), x_fp32 = step_s / fp32_step_s; the same from process CPU time (cpu_step_s, fp32_cpu_step_s, x_fp32_cpu), which a
// machine shared with other jobs disturbs less (every arm runs on one thread); gemm_share
// (fraction of the wall-clock step inside backend GEMMs, from LinearStats) and quantize_share;
// faults_per_step and fp32_faults_per_step, the process's page faults (minor and major, getrusage)
// per timed step of the row and of the reference.
// One thread everywhere (torch::set_num_threads(1), SimBackend threads 1): a sweep runs one job
// per core. The workload is FP8LAB_BENCH_WORKLOAD (default gpt-small, the default sweep's).
//
//   build-*/bench/train_step_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <sys/resource.h>

#include <chrono>
#include <memory>
#include <string>

#include "bench/bench_main.hpp"
#include "bench/step_trainer.hpp"
#include "bench/timing.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "experiments/workloads/registry.hpp"
#include "recipes/default_recipe.hpp"
#include "recipes/probe_settings.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::bench {
namespace {

namespace ex = experiments;
namespace rc = recipes;

std::string workload_name() { return bench_workload("gpt-small"); }

enum class Arm { torch_fp32, baseline_fp32, baseline_bf16, fp8 };

// A model of the workload converted for the arm (FP8 Linears; the baseline's high-precision Linear
// for the rest, or for every Linear in the baseline arms; plain LibTorch for torch_fp32).
StepTrainer make_trainer(Arm arm, const rc::Recipe& recipe, bool measure_operands = true) {
  return StepTrainer(workload_name(), [arm, &recipe, measure_operands](ex::TrainableModel& model) {
    auto backend = std::make_shared<const ex::SimBackend>(ex::SimBackendOptions{.threads = 1});
    if (arm == Arm::fp8) {
      ex::convert_model(model, recipe, backend);
      ex::set_measure_operands(model, measure_operands);
    }
    if (arm != Arm::torch_fp32) {
      ex::convert_model_to_high_precision(model, backend,
                                          arm == Arm::baseline_bf16 ? ex::HighPrecision::bf16
                                                                    : ex::HighPrecision::fp32);
    }
  });
}

struct StepTimes {
  double wall = 0.0;
  double cpu = 0.0;
  double faults = 0.0;  // page faults per step
};

// The process's page faults so far (minor and major).
double page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_minflt + usage.ru_majflt);
}

StepTimes mean_step_times(StepTrainer& trainer, int steps) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  const double faults_start = page_faults();
  for (int i = 0; i < steps; ++i) trainer.step();
  return {seconds_since(start) / steps, (process_cpu_seconds() - cpu_start) / steps,
          (page_faults() - faults_start) / steps};
}

// The reference is the process's first training: its first steps grow glibc's heap (about 690
// page faults a step over the first 20 llama-xs steps) and so run slower than every later step,
// which flattered each row's ratio. Warm-up steps run in groups of kReferenceWarmupGroup until a
// group faults no page (at most kMaxReferenceWarmup steps; a single step without faults came
// too early: the next 20 still faulted), then 20 steps are timed.
constexpr int kReferenceWarmupGroup = 5;
constexpr int kMaxReferenceWarmup = 60;

struct Reference {
  StepTimes times;
  int warmup_steps = 0;
};

Reference fp32_reference() {
  static const Reference reference = [] {
    auto trainer = make_trainer(Arm::torch_fp32, rc::Recipe{});
    Reference r;
    while (r.warmup_steps < kMaxReferenceWarmup) {
      r.warmup_steps += kReferenceWarmupGroup;
      if (mean_step_times(trainer, kReferenceWarmupGroup).faults == 0.0) break;
    }
    r.times = mean_step_times(trainer, 20);
    return r;
  }();
  return reference;
}

void run(benchmark::State& state, Arm arm, const rc::Recipe& recipe, bool measure_operands = true) {
  torch::set_num_threads(1);
  const Reference fp32 = fp32_reference();
  const StepTimes& reference = fp32.times;
  auto trainer = make_trainer(arm, recipe, measure_operands);
  trainer.step();  // warm-up
  ex::reset_linear_stats(*trainer.model);
  double seconds = 0.0, cpu = 0.0, faults = 0.0;
  std::int64_t steps = 0;
  for (auto _ : state) {
    const double faults_start = page_faults();
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    trainer.step();
    cpu += process_cpu_seconds() - cpu_start;
    seconds += seconds_since(start);
    faults += page_faults() - faults_start;
    ++steps;
  }
  const auto backend = backend_seconds(*trainer.model);
  const double step = seconds / static_cast<double>(steps);
  state.counters["step_s"] = step;
  const double cpu_step = cpu / static_cast<double>(steps);
  state.counters["fp32_step_s"] = reference.wall;
  state.counters["x_fp32"] = step / reference.wall;
  state.counters["cpu_step_s"] = cpu_step;
  state.counters["fp32_cpu_step_s"] = reference.cpu;
  state.counters["x_fp32_cpu"] = cpu_step / reference.cpu;
  state.counters["faults_per_step"] = faults / static_cast<double>(steps);
  state.counters["fp32_faults_per_step"] = reference.faults;
  state.counters["fp32_warmup_steps"] = fp32.warmup_steps;
  state.counters["gemm_share"] = backend.gemm / seconds;
  state.counters["quantize_share"] = backend.quantize / seconds;
  state.SetLabel(workload_name());
}

void register_all() {
  benchmark::RegisterBenchmark("train_step/torch_fp32", [](benchmark::State& s) {
    run(s, Arm::torch_fp32, rc::Recipe{});
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_step/baseline_fp32", [](benchmark::State& s) {
    run(s, Arm::baseline_fp32, rc::Recipe{});
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("train_step/baseline_bf16", [](benchmark::State& s) {
    run(s, Arm::baseline_bf16, rc::Recipe{});
  })->Unit(benchmark::kMillisecond);
  for (const rc::Scaling scaling :
       {rc::Scaling::delayed, rc::Scaling::current, rc::Scaling::mxfp8, rc::Scaling::block}) {
    for (const bool measure : {true, false}) {
      const std::string name = "train_step/fp8_" + std::string(rc::name(scaling)) +
                               (measure ? "" : "_unlogged");
      benchmark::RegisterBenchmark(name.c_str(), [scaling, measure](benchmark::State& s) {
        run(s, Arm::fp8, rc::recipe_with_defaults(scaling), measure);
      })->Unit(benchmark::kMillisecond);
    }
  }
  // The sub-byte recipes of L7 (docs/fp4.md), unlogged, on their default GEMM (blackwell_block)
  // and on fp32_seq (the GEMMs L7's published sweeps pin).
  struct SubByte {
    const char* name;
    const char* word;  // a probe word (recipes/probe_settings.hpp)
  };
  static constexpr SubByte kSubByte[] = {
      {"mxfp4", "mxfp4"},
      {"nvfp4_te", "nvfp4:nvfp4_mode=te:nvfp4_2d=true"},
      {"nvfp4_te_rht_sr",
       "nvfp4:nvfp4_mode=te:nvfp4_2d=true:nvfp4_rht=true:nvfp4_stochastic_rounding=true"}};
  for (const SubByte& r : kSubByte) {
    for (const bool fp32_seq : {false, true}) {
      std::string word = r.word;
      if (fp32_seq) word += ":gemm.fprop=fp32_seq:gemm.dgrad=fp32_seq:gemm.wgrad=fp32_seq";
      const rc::Recipe recipe = rc::probe_recipe(word, rc::Site{"train_step_bench", 0}, "row");
      const std::string name = std::string("train_step/fp4_") + r.name +
                               (fp32_seq ? "_fp32_seq" : "") + "_unlogged";
      benchmark::RegisterBenchmark(name.c_str(), [recipe](benchmark::State& s) {
        run(s, Arm::fp8, recipe, false);
      })->Unit(benchmark::kMillisecond);
    }
  }
}

[[maybe_unused]] const bool registered = add_rows(register_all);

}  // namespace
}  // namespace fp8lab::bench
