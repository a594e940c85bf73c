// One model of a workload with its AdamW optimizer and one training batch, for the training-step
// benchmarks (train_step_bench, gpu_train_step_bench, thread_scaling_bench): step() is one forward (inside the FP8
// autocast), backward and optimizer step, as the runner trains (experiments/run/training.cpp).
#pragma once

#include <torch/cuda.h>
#include <torch/torch.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/workloads/registry.hpp"
#include "recipes/default_recipe.hpp"

namespace fp8lab::bench {

// The workload a training-step benchmark trains: FP8LAB_BENCH_WORKLOAD, else `fallback`.
inline std::string bench_workload(const char* fallback) {
  const char* name = std::getenv("FP8LAB_BENCH_WORKLOAD");
  return name != nullptr ? name : fallback;
}

struct StepTrainer {
  std::unique_ptr<experiments::Workload> workload;
  std::shared_ptr<experiments::TrainableModel> model;
  experiments::Batch batch;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  bool synchronize_cuda;

  // `convert` swaps the model's Linears (FP8, baseline; nothing for plain LibTorch) before the
  // model and batch move to `device`, so that the new modules' parameters move too.
  // `synchronize_cuda`: end each step with a device synchronization, so that work the step queued
  // on the GPU (kernels, the cuda backend's queued scaling updates) is timed with it.
  StepTrainer(const std::string& workload_name,
              const std::function<void(experiments::TrainableModel&)>& convert,
              torch::Device device = torch::kCPU, bool synchronize_cuda_ = false)
      : workload(experiments::make_workload(workload_name)),
        model(workload->make_model(1)),
        batch(workload->train_batch(0, 1)),
        synchronize_cuda(synchronize_cuda_ || device.is_cuda()) {
    if (convert) convert(*model);
    if (device.is_cuda()) {
      model->to(device);
      batch.input = batch.input.to(device);
      batch.target = batch.target.to(device);
    }
    const experiments::TrainingSchedule s = workload->schedule();
    optimizer = std::make_unique<torch::optim::AdamW>(model->parameters(),
                                                      torch::optim::AdamWOptions(s.learning_rate)
                                                          .betas({s.beta1, s.beta2})
                                                          .weight_decay(s.weight_decay));
    model->train();
  }

  void step() {
    torch::Tensor loss;
    {
      experiments::ContextualFp8Autocast fp8(*model, false);
      loss = model->loss(batch);
    }
    optimizer->zero_grad();
    loss.backward();
    optimizer->step();
    if (synchronize_cuda) torch::cuda::synchronize();
  }
};

// The seconds a model's Linears spent in backend GEMMs (in all, and per role: fprop, dgrad,
// wgrad) and in quantizers since their statistics were last reset (LinearStats).
struct BackendSeconds {
  double gemm = 0.0, quantize = 0.0;
  double role[3] = {0.0, 0.0, 0.0};
};
inline BackendSeconds backend_seconds(const experiments::TrainableModel& model) {
  BackendSeconds s;
  for (const auto& linear : experiments::collect_linear_stats(model)) {
    s.gemm += linear.stats.total_gemm_seconds();
    s.quantize += linear.stats.quantize_seconds;
    for (std::size_t r = 0; r < 3; ++r) s.role[r] += linear.stats.gemm_seconds[r];
  }
  return s;
}

}  // namespace fp8lab::bench
