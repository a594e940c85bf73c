// The baseline Linear: all three GEMMs (fprop, dgrad, wgrad) are the backend's deterministic
// high-precision GEMM (docs/numerics.md §3) with fp32 or bf16 operands, never FP8, with or without an
// FP8 autocast region. Its bits equal those of an Fp8Linear whose recipe overrides all three GEMMs
// (override_linear_precision = (true, true, true)) on the same backend and HighPrecision.
#pragma once

#include <torch/nn/pimpl.h>

#include "experiments/linear/backend_linear.hpp"

namespace fp8lab::experiments {

class HighPrecisionLinearImpl : public BackendLinearImpl {
 public:
  // Holds source's weight and bias tensors themselves (see BackendLinearImpl).
  HighPrecisionLinearImpl(const torch::nn::LinearImpl& source,
                          std::shared_ptr<const LinearBackend> backend,
                          HighPrecision high_precision);
  HighPrecisionLinearImpl(torch::Tensor weight, torch::Tensor bias,
                          std::shared_ptr<const LinearBackend> backend,
                          HighPrecision high_precision);

  // Declared here (not only inherited) so that torch::nn::AnyModule and Sequential::ptr<HighPrecisionLinearImpl>
  // see this class as the module's type.
  torch::Tensor forward(const torch::Tensor& input) { return BackendLinearImpl::forward(input); }

  void pretty_print(std::ostream& stream) const override;

 protected:
  LinearExecution execution() override;
};

// The module holder (std::shared_ptr semantics), as torch::nn::Linear for LinearImpl.
TORCH_MODULE(HighPrecisionLinear);

}  // namespace fp8lab::experiments
