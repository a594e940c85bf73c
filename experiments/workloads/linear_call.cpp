#include "experiments/workloads/linear_call.hpp"

#include <stdexcept>

#include "experiments/linear/backend_linear.hpp"

namespace fp8lab::experiments {

torch::Tensor forward_linear(torch::nn::Module& parent, const std::string& name,
                             const torch::Tensor& x) {
  const auto children = parent.named_children();
  const auto* child = children.find(name);
  if (child == nullptr) {
    throw std::runtime_error("forward_linear: " + parent.name() + " has no child '" + name + "'");
  }
  // Linears see 2-D inputs [rows, in_features] (the GEMM shape of the FP8 layers); any leading
  // dimensions are folded into rows and restored on the output.
  const auto in_features = x.size(-1);
  const auto x2d = x.dim() == 2 ? x : x.reshape({-1, in_features});
  auto restore = [&](torch::Tensor y) {
    if (x.dim() == 2) return y;
    auto shape = x.sizes().vec();
    shape.back() = y.size(-1);
    return y.reshape(shape);
  };
  if (auto* linear = dynamic_cast<torch::nn::LinearImpl*>(child->get())) {
    return restore(linear->forward(x2d));
  }
  // Fp8Linear and HighPrecisionLinear, as convert_model leaves them.
  if (auto* linear = dynamic_cast<BackendLinearImpl*>(child->get())) {
    return restore(linear->forward(x2d));
  }
  throw std::runtime_error("forward_linear: child '" + name + "' of " + parent.name() + " is a " +
                           (*child)->name() + ", not a Linear fp8lab can call");
}

}  // namespace fp8lab::experiments
