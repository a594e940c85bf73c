#include "experiments/run/null_run.hpp"

#include <torch/torch.h>

#include <array>
#include <cmath>

#include "experiments/linear/backend_linear.hpp"
#include "experiments/linear/operand_noise.hpp"
#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

namespace {

// The same spelling as the record's layer rows ("input", "fprop").
const char* operand_name(std::size_t t) {
  static const char* names[] = {"input", "weight", "grad_output"};
  return names[t];
}
const char* gemm_name(std::size_t g) {
  static const char* names[] = {"fprop", "dgrad", "wgrad"};
  return names[g];
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

std::string per_step_perturbation(const std::string& sizing) {
  return "every GEMM operand at every training step plus " + sizing +
         "'s quantization error of it with random signs";
}

std::string per_step_label(const std::string& sizing) {
  return "null run (per-step noise sized by " + sizing + ")";
}

std::string null_run_id(const std::string& baseline_run_id, recipes::NullArm arm) {
  return (arm == recipes::NullArm::once ? "null-" : "null-per_step-") + baseline_run_id;
}

std::vector<std::shared_ptr<const OperandNoise>> attach_operand_noise(TrainableModel& model,
                                                                      const std::string& sizing,
                                                                      std::uint64_t seed,
                                                                      const std::string& source) {
  const WhatIfRecipes lowered = lower_what_if({sizing}, source);
  std::vector<std::shared_ptr<const OperandNoise>> noises;
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* linear = dynamic_cast<BackendLinearImpl*>(module.get())) {
      auto noise = std::make_shared<OperandNoise>(lowered.front(), seed, noises.size());
      linear->set_noise(noise);
      noises.push_back(std::move(noise));
    }
  }
  return noises;
}

nlohmann::json operand_noise_summary(const std::vector<std::shared_ptr<const OperandNoise>>& noises,
                                     const std::string& sizing) {
  std::array<std::array<NoiseEnergy, 3>, 3> total{};
  for (const auto& noise : noises) {
    for (std::size_t t = 0; t < 3; ++t) {
      for (std::size_t g = 0; g < 3; ++g) {
        const NoiseEnergy& e = noise->energy()[t][g];
        total[t][g].signal += e.signal;
        total[t][g].noise += e.noise;
        total[t][g].elements += e.elements;
      }
    }
  }
  NoiseEnergy all;
  nlohmann::json operands = nlohmann::json::object();
  for (std::size_t t = 0; t < 3; ++t) {
    for (std::size_t g = 0; g < 3; ++g) {
      const NoiseEnergy& e = total[t][g];
      if (e.elements == 0) continue;
      operands[std::string(operand_name(t)) + "/" + gemm_name(g)] = {
          {"sqnr_db", finite_or_null(e.sqnr_db())},
          {"elements", e.elements}};
      all.signal += e.signal;
      all.noise += e.noise;
      all.elements += e.elements;
    }
  }
  return {{"sized_by", sizing},
          {"sqnr_db", finite_or_null(all.sqnr_db())},
          {"elements", all.elements},
          {"operands", operands}};
}

void round_parameters_to_bf16(TrainableModel& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.copy_(p.to(torch::kBFloat16).to(p.scalar_type()));
}

}  // namespace fp8lab::experiments
