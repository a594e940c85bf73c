#include "experiments/linear/backend_linear.hpp"

#include <stdexcept>

namespace fp8lab::experiments {

BackendLinearImpl::BackendLinearImpl(const std::string& module_name, torch::Tensor weight_tensor,
                                     torch::Tensor bias_tensor,
                                     std::shared_ptr<const LinearBackend> backend,
                                     HighPrecision high_precision)
    : torch::nn::Module(module_name),
      backend_(std::move(backend)),
      high_precision_(high_precision) {
  if (!backend_) throw std::invalid_argument(module_name + ": no backend given");
  if (!weight_tensor.defined() || weight_tensor.dim() != 2 ||
      weight_tensor.scalar_type() != torch::kFloat) {
    throw std::invalid_argument(
        module_name + ": weight must be a 2-D float32 tensor [out_features, in_features]");
  }
  if (bias_tensor.defined() &&
      (bias_tensor.dim() != 1 || bias_tensor.size(0) != weight_tensor.size(0) ||
       bias_tensor.scalar_type() != torch::kFloat)) {
    throw std::invalid_argument(module_name + ": bias must be a float32 tensor [out_features]");
  }
  weight = register_parameter("weight", weight_tensor, weight_tensor.requires_grad());
  if (bias_tensor.defined()) {
    bias = register_parameter("bias", bias_tensor, bias_tensor.requires_grad());
  }
}

torch::Tensor BackendLinearImpl::forward(const torch::Tensor& input) {
  if (input.dim() < 1 || input.size(-1) != in_features()) {
    throw std::invalid_argument(
        name() + ": input's last dimension must be in_features = " + std::to_string(in_features()) +
        ", got shape " + c10::str(input.sizes()));
  }
  const torch::Tensor rows = input.reshape({-1, in_features()});
  LinearExecution e = execution();
  e.measure_operands = measure_operands_;
  e.what_if = what_if_;
  e.watch = watch_;
  e.rht_probe = rht_probe_;
  torch::Tensor y = run_linear(rows, weight, bias, std::move(e));
  auto shape = input.sizes().vec();
  shape.back() = out_features();
  return y.reshape(shape);
}

}  // namespace fp8lab::experiments
