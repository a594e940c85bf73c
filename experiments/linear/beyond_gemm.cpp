#include "experiments/linear/beyond_gemm.hpp"

#include <span>
#include <stdexcept>
#include <string>

#include "experiments/linear/autocast.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {
namespace {

using sim::scaling::ElementwisePrecision;

// The value of q with the gradient of x: the straight-through estimator.
torch::Tensor straight_through(const torch::Tensor& x, const torch::Tensor& q) {
  return x + (q - x).detach();
}

torch::Tensor to_bf16(const torch::Tensor& x) { return x.to(torch::kBFloat16); }

// sim's MX quantizer over rows of the last dimension, dequantized, as an fp32 tensor like x.
torch::Tensor mx_dequantized(const torch::Tensor& x, const sim::scaling::QuantizePlan& plan) {
  const auto cols = x.size(-1);
  if (cols % sim::scaling::kMxBlockSize != 0) {
    throw std::invalid_argument("quantize_beyond_gemm: mx needs a last dimension that is a "
                                "multiple of " +
                                std::to_string(sim::scaling::kMxBlockSize) + ", got " +
                                std::to_string(cols));
  }
  const auto host = x.detach().to(torch::kCPU, torch::kFloat).contiguous();
  const auto rows = host.numel() / cols;
  const auto result = sim::scaling::quantize(
      plan, std::span<const float>(host.data_ptr<float>(), static_cast<std::size_t>(host.numel())),
      rows, cols);
  auto values = sim::scaling::dequantize(result.tensor);
  return torch::from_blob(values.data(), host.sizes(), torch::kFloat).clone().to(x.device());
}

}  // namespace

int apply_beyond_gemm_plans(torch::nn::Module& model, const recipes::Recipe& recipe) {
  const BeyondGemmPlans plans{recipes::elementwise_plan(recipe, recipes::BeyondGemm::kNormAffine),
                              recipes::elementwise_plan(recipe, recipes::BeyondGemm::kActivation)};
  int modules = 0;
  for (const auto& module : model.modules(/*include_self=*/true)) {
    if (auto* quantizable = dynamic_cast<BeyondGemmQuantizable*>(module.get())) {
      quantizable->set_beyond_gemm_plans(plans);
      ++modules;
    }
  }
  const bool asks = plans.norm_affine.precision != ElementwisePrecision::kHigh ||
                    plans.activation.precision != ElementwisePrecision::kHigh;
  if (asks && modules == 0) {
    throw std::invalid_argument(
        "norm_affine_precision / activation_precision: this workload's model has no LayerNorm or "
        "activation that applies them (residual-mlp does); accepted here: high");
  }
  return modules;
}

bool beyond_gemm_active() { return Fp8Autocast::active_record() != nullptr; }

torch::Tensor quantize_beyond_gemm(const torch::Tensor& x, const recipes::ElementwisePlan& plan) {
  if (!beyond_gemm_active()) return x;
  switch (plan.precision) {
    case ElementwisePrecision::kHigh: return x;
    case ElementwisePrecision::kBf16:
      return straight_through(x, to_bf16(x.detach()).to(x.scalar_type()));
    case ElementwisePrecision::kMx: return straight_through(x, mx_dequantized(x, plan.mx));
  }
  return x;
}

torch::Tensor layer_norm_beyond_gemm(const torch::Tensor& x, const torch::Tensor& weight,
                                     const torch::Tensor& bias, double eps,
                                     const recipes::ElementwisePlan& plan) {
  const std::vector<std::int64_t> shape{x.size(-1)};
  if (!beyond_gemm_active() || plan.precision == ElementwisePrecision::kHigh) {
    return torch::layer_norm(x, shape, weight, bias, eps);
  }
  // bf16 rounds the affine parameters on the way into bf16; mx quantizes them first (its values,
  // 4 significant bits times a power of two, are exact in bf16).
  const auto w = plan.precision == ElementwisePrecision::kMx ? quantize_beyond_gemm(weight, plan)
                                                             : weight;
  const auto b = plan.precision == ElementwisePrecision::kMx ? quantize_beyond_gemm(bias, plan)
                                                             : bias;
  return torch::layer_norm(to_bf16(x), shape, to_bf16(w), to_bf16(b), eps).to(x.scalar_type());
}

torch::Tensor activation_beyond_gemm(const torch::Tensor& u,
                                     const std::function<torch::Tensor(const torch::Tensor&)>& act,
                                     const recipes::ElementwisePlan& plan) {
  if (!beyond_gemm_active() || plan.precision == ElementwisePrecision::kHigh) return act(u);
  const auto in = quantize_beyond_gemm(u, plan);  // mx: the input's blocks; bf16: as is
  const auto out = act(to_bf16(in)).to(u.scalar_type());
  return plan.precision == ElementwisePrecision::kMx ? quantize_beyond_gemm(out, plan) : out;
}

}  // namespace fp8lab::experiments
