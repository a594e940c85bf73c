// Whole training steps (forward, backward, AdamW) on the `cuda` LinearBackend against the CPU
// reference (the `sim` backend) for the same workload and recipe, measured in the same process
// (issue 7). One row per workload x recipe x placement:
//   gpu_train_step/<workload>/<recipe>/host_model   model and batch on the CPU: every backend call
//                                                   stages its operands to the device and back
//   gpu_train_step/<workload>/<recipe>/cuda_model   model and batch on CUDA: the backend's resident
//                                                   path (operands read, kept and written on the
//                                                   device; LibTorch's CUDA kernels elsewhere)
// No Linear measures its operands (set_measure_operands(false)), as on the runner's steps between
// statistics steps, for the cuda rows and the CPU reference alike.
// Counters: step_s (mean wall-clock step on the cuda backend over the timed iterations, the device
// synchronized at the end of each step), cpu_reference_step_s (mean wall-clock step of the same
// workload, recipe and batch on the sim backend, measured once per workload and recipe before
// its first row), and
// ratio_to_cpu_reference = step_s / cpu_reference_step_s (below 1: the GPU step is faster;
// scripts/device-check's summary.json keeps counters named *ratio*); gemm_share
// and quantize_share (fraction of the cuda step inside backend GEMM / quantize calls, as
// LinearStats times them on the host: on cuda_model rows that is launch time, not kernel time).
// The CPU reference is what `fp8lab run --backend sim` runs: SimBackend and LibTorch on one thread
// each (a sweep runs one job per core). Without a CUDA device (or in a build without CUDA) every
// row is skipped with the reason, visible in the output.
// Iterations are fixed (20 cuda steps, 10 reference steps, one warm-up each) so that the whole
// program stays well under a minute on a GPU machine (scripts/device-check runs it): the sim
// reference takes about 2 ms (gpt-tiny) and 30 ms (gpt-small) per step on one core.
//
//   build-*/bench/gpu_train_step_bench
#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "bench/bench_main.hpp"
#include "bench/step_trainer.hpp"
#include "bench/timing.hpp"
#include "experiments/linear/backend_linear.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "experiments/workloads/registry.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::bench {
namespace {

namespace ex = experiments;
namespace rc = recipes;

constexpr int kCudaSteps = 20;
constexpr int kReferenceSteps = 10;

// The workload's model with FP8 Linears over `backend` (the same model and batch for both
// backends: make_model and train_batch are pure functions of the seed), measuring no operand.
StepTrainer make_trainer(const std::string& workload, const rc::Recipe& recipe,
                         std::shared_ptr<const ex::LinearBackend> backend, bool model_on_cuda) {
  const bool cuda_backend = backend->name() == "cuda";
  return StepTrainer(
      workload,
      [&recipe, backend](ex::TrainableModel& model) {
        ex::convert_model(model, recipe, backend);
        ex::set_measure_operands(model, false);
      },
      model_on_cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU), cuda_backend);
}

double mean_step_seconds(StepTrainer& trainer, int steps) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) trainer.step();
  return seconds_since(start) / steps;
}

// The sim backend's mean step for a workload and recipe, measured on its first use.
double cpu_reference_step(const std::string& workload, const std::string& recipe_name,
                          const rc::Recipe& recipe) {
  static std::map<std::string, double> measured;
  const std::string key = workload + "/" + recipe_name;
  if (const auto it = measured.find(key); it != measured.end()) return it->second;
  auto reference = make_trainer(
      workload, recipe, std::make_shared<const ex::SimBackend>(ex::SimBackendOptions{.threads = 1}),
      false);
  reference.step();  // warm-up
  return measured[key] = mean_step_seconds(reference, kReferenceSteps);
}

void run(benchmark::State& state, const std::string& workload, const std::string& recipe_name,
         const rc::Recipe& recipe, bool model_on_cuda) {
  torch::set_num_threads(1);
  std::shared_ptr<const ex::LinearBackend> cuda;
  try {
    cuda = ex::make_backend(ex::BackendChoice{.name = "cuda"});
  } catch (const std::runtime_error& error) {
    state.SkipWithError(("no CUDA device: " + std::string(error.what())).c_str());
    return;
  }
  if (model_on_cuda && !torch::cuda::is_available()) {
    state.SkipWithError("LibTorch sees no CUDA device (a CPU-only LibTorch?): cannot place the "
                        "model on CUDA");
    return;
  }
  const double reference_step = cpu_reference_step(workload, recipe_name, recipe);

  // A failure on the device ends this row with its message, not the whole program.
  const auto fail = [&state](const std::exception& error) {
    state.SkipWithError(("failed: " + std::string(error.what())).c_str());
  };
  std::unique_ptr<StepTrainer> trainer;
  try {
    trainer = std::make_unique<StepTrainer>(make_trainer(workload, recipe, cuda, model_on_cuda));
    trainer->step();  // warm-up (first kernel launches, allocations)
  } catch (const std::exception& error) {
    fail(error);
    return;
  }
  ex::reset_linear_stats(*trainer->model);
  double seconds = 0.0;
  std::int64_t steps = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    try {
      trainer->step();
    } catch (const std::exception& error) {
      fail(error);
      break;  // as Google Benchmark asks after SkipWithError inside the loop
    }
    seconds += seconds_since(start);
    ++steps;
  }
  if (state.error_occurred()) return;
  const auto backend = backend_seconds(*trainer->model);
  const double step = seconds / static_cast<double>(steps);
  state.counters["step_s"] = step;
  state.counters["cpu_reference_step_s"] = reference_step;
  state.counters["ratio_to_cpu_reference"] = step / reference_step;
  state.counters["gemm_share"] = backend.gemm / seconds;
  state.counters["quantize_share"] = backend.quantize / seconds;
}

struct NamedRecipe {
  const char* name;
  rc::Recipe recipe;
};

void register_all() {
  // delayed: accelerate's defaults (HYBRID, history 1024, most_recent; TE's own DelayedScaling
  // default algorithm is max); the others with their scaling's defaults.
  const NamedRecipe recipes[] = {{"delayed_hybrid", rc::recipe_with_defaults(rc::Scaling::delayed)},
                                 {"current", rc::recipe_with_defaults(rc::Scaling::current)},
                                 {"block", rc::recipe_with_defaults(rc::Scaling::block)},
                                 {"mxfp8", rc::recipe_with_defaults(rc::Scaling::mxfp8)}};
  for (const std::string workload : {"gpt-tiny", "gpt-small"}) {
    for (const NamedRecipe& named : recipes) {
      for (const bool model_on_cuda : {false, true}) {
        benchmark::RegisterBenchmark(
            ("gpu_train_step/" + workload + "/" + named.name +
             (model_on_cuda ? "/cuda_model" : "/host_model"))
                .c_str(),
            [workload, name = std::string(named.name), recipe = named.recipe,
             model_on_cuda](benchmark::State& s) { run(s, workload, name, recipe, model_on_cuda); })
            ->Unit(benchmark::kMillisecond)
            ->Iterations(kCudaSteps);
      }
    }
  }
}

[[maybe_unused]] const bool registered = add_rows(register_all);

}  // namespace
}  // namespace fp8lab::bench
