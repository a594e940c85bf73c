#include "experiments/linear/autoswitch.hpp"

#include <torch/nn/module.h>

#include "experiments/linear/fp8_linear.hpp"

namespace fp8lab::experiments {

std::optional<AutoswitchCrossing> autoswitch_crossing(const OperandStats& operand,
                                                      const recipes::Autoswitch& rule) {
  if (operand.quantizations == 0) return std::nullopt;
  if (operand.count > 0) {
    const double percent = 100.0 * static_cast<double>(operand.underflowed) /
                           static_cast<double>(operand.count);
    if (percent > rule.underflow_percent) {
      return AutoswitchCrossing{"underflow_percent", percent, rule.underflow_percent};
    }
  }
  if (operand.sqnr_elements > 0) {
    const double mse = operand.noise_energy / static_cast<double>(operand.sqnr_elements);
    if (mse > rule.mse) return AutoswitchCrossing{"mse", mse, rule.mse};
  }
  return std::nullopt;
}

std::vector<AutoswitchEvent> apply_autoswitch(torch::nn::Module& model,
                                              const recipes::Autoswitch& rule, std::int64_t step) {
  std::vector<AutoswitchEvent> events;
  if (!rule.enabled) return events;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    auto* linear = dynamic_cast<Fp8LinearImpl*>(item.value().get());
    if (linear == nullptr) continue;
    for (const Gemm gemm : {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad}) {
      if (!linear->runs_fp8(gemm)) continue;
      const auto operands = sim::scaling::gemm_operands(gemm);
      for (const Operand tensor : {operands.a, operands.b}) {
        const auto crossing = autoswitch_crossing(linear->stats().operand(tensor, gemm), rule);
        if (!crossing) continue;
        linear->switch_to_high_precision(gemm);
        events.push_back({step, item.key(), gemm, tensor, *crossing});
        break;
      }
    }
  }
  return events;
}

}  // namespace fp8lab::experiments
