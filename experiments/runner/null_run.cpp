#include "experiments/runner/null_run.hpp"

#include <torch/torch.h>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

std::string null_run_id(const std::string& baseline_run_id) { return "null-" + baseline_run_id; }

void round_parameters_to_bf16(TrainableModel& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.copy_(p.to(torch::kBFloat16).to(p.scalar_type()));
}

}  // namespace fp8lab::experiments
