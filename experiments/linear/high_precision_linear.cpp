#include "experiments/linear/high_precision_linear.hpp"

#include <torch/nn/modules/linear.h>

#include <ostream>

namespace fp8lab::experiments {

HighPrecisionLinearImpl::HighPrecisionLinearImpl(const torch::nn::LinearImpl& source,
                                                 std::shared_ptr<const LinearBackend> backend,
                                                 HighPrecision high_precision)
    : HighPrecisionLinearImpl(source.weight, source.bias, std::move(backend), high_precision) {}

HighPrecisionLinearImpl::HighPrecisionLinearImpl(torch::Tensor weight_tensor,
                                                 torch::Tensor bias_tensor,
                                                 std::shared_ptr<const LinearBackend> backend,
                                                 HighPrecision high_precision)
    : BackendLinearImpl("fp8lab::HighPrecisionLinear", std::move(weight_tensor),
                        std::move(bias_tensor), std::move(backend), high_precision) {}

void HighPrecisionLinearImpl::pretty_print(std::ostream& stream) const {
  stream << "fp8lab::HighPrecisionLinear(in_features=" << in_features()
         << ", out_features=" << out_features() << ", bias=" << (bias.defined() ? "true" : "false")
         << ", operands=" << experiments::name(high_precision_) << ", backend=" << backend_->name()
         << ")";
}

LinearExecution HighPrecisionLinearImpl::execution() {
  LinearExecution e;
  e.backend = backend_;
  e.high_precision = high_precision_;
  e.stats = stats_;
  e.noise = noise_;
  return e;
}

}  // namespace fp8lab::experiments
