// The recipe's autoswitch rule (recipes::Autoswitch): after a training step, a GEMM of an
// Fp8Linear whose quantized operand crossed a threshold in that step moves to high precision for
// the rest of the run. The statistics are those the Linear already keeps (linear_stats.hpp):
//   underflow%  100 * underflowed / count   (nonzero inputs that became 0, over all elements)
//   MSE         noise_energy / sqnr_elements (mean squared quantization error of the finite ones)
// A GEMM's figure is its worst operand's (fprop: input, weight; dgrad: grad_output, weight; wgrad:
// grad_output, input); the underflow threshold is checked first. Only steps whose operands were
// measured can switch (the runner measures every step when the rule is on).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/linear/linear_stats.hpp"
#include "recipes/recipe.hpp"

namespace torch::nn {
class Module;
}

namespace fp8lab::experiments {

struct AutoswitchCrossing {
  const char* statistic;  // "underflow_percent" or "mse"
  double value;
  double threshold;
};

// Whether one operand's statistics of one step cross the rule; nullopt when they do not or when
// it was not quantized.
std::optional<AutoswitchCrossing> autoswitch_crossing(const OperandStats& operand,
                                                      const recipes::Autoswitch& rule);

struct AutoswitchEvent {
  std::int64_t step = 0;  // the step whose statistics crossed; high precision from step + 1
  std::string layer;
  Gemm gemm = Gemm::kFprop;
  Operand tensor = Operand::kInput;  // the operand that crossed
  AutoswitchCrossing crossing{};
};

// Applies the rule to every Fp8Linear of `model` with the statistics of `step` (before they are
// reset) and returns the switches it made, in named_modules() order, fprop, dgrad, wgrad.
std::vector<AutoswitchEvent> apply_autoswitch(torch::nn::Module& model,
                                              const recipes::Autoswitch& rule, std::int64_t step);

}  // namespace fp8lab::experiments
