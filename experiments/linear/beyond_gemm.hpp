// Quantization beyond the GEMMs: a recipe's norm_affine_precision and activation_precision
// (recipes/recipe.hpp), executed as recipes::elementwise_plan lowers them. Su et al. 2025 (arXiv
// 2506.20752) trained their residual-MLP proxy through microsoft/microxcaling, which besides the
// Linears' MX GEMM operands rounds LayerNorm's input, weight and bias and the GeLU's input to
// bfloat16 and does their elementwise math in bfloat16; their diagnosis of the divergence is
// LayerNorm weights clipped by a floor-rounded MX scale. The three precisions (high, bf16, mx)
// cover both.
//
//   layer norm (norm_affine)   high: torch layer_norm in fp32 (what TE and torchao leave alone)
//                              bf16: x, weight, bias rounded to bf16 (RN), layer_norm in bf16
//                              mx:   weight and bias MX-quantized ([1, d], 1 x 32 blocks), then bf16
//   activation act(u)          high: act(u) in fp32
//                              bf16: act of bf16(u), in bf16
//                              mx:   u MX-quantized, act in bf16, its output MX-quantized
// Each quantizer passes the gradient straight through (identity), as microxcaling's quantizers
// and the FP8 Linears' do; the bf16 math is torch's bf16 kernels (fp32 inside, each op's result
// rounded), where microxcaling rounds after every elementary operation. Quantization happens in
// FP8 regions only (Fp8Autocast::active_record()), like the FP8 Linears': eval passes run in
// high precision unless the recipe's use_autocast_during_eval.
#pragma once

#include <torch/torch.h>

#include <functional>

#include "recipes/lowering.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

struct BeyondGemmPlans {
  recipes::ElementwisePlan norm_affine;
  recipes::ElementwisePlan activation;
};

// A module with a LayerNorm or an activation function that a recipe may quantize (residual-mlp's
// blocks). Its plans are high precision until apply_beyond_gemm_plans sets them.
class BeyondGemmQuantizable {
 public:
  virtual ~BeyondGemmQuantizable() = default;
  void set_beyond_gemm_plans(const BeyondGemmPlans& plans) { plans_ = plans; }
  const BeyondGemmPlans& beyond_gemm_plans() const { return plans_; }

 private:
  BeyondGemmPlans plans_;
};

// Gives every BeyondGemmQuantizable module of `model` the recipe's plans. A recipe that asks for
// anything but high precision from a model without such modules is refused
// (std::invalid_argument naming the fields and the workloads that apply them), so that a run never
// claims a quantization it did not do. Returns how many modules took the plans.
int apply_beyond_gemm_plans(torch::nn::Module& model, const recipes::Recipe& recipe);

// Whether quantization beyond the GEMMs applies here (an FP8 region is active on this thread).
bool beyond_gemm_active();

// x's value quantized as `plan` says (in an FP8 region; else x), the gradient straight through.
// kMx quantizes x viewed as [numel / last dim, last dim] with plan.mx (sim::scaling::quantize)
// and dequantizes it; the last dimension must be a multiple of the MX block (32).
torch::Tensor quantize_beyond_gemm(const torch::Tensor& x, const recipes::ElementwisePlan& plan);

// LayerNorm over the last dimension with affine weight and bias, under the norm_affine plan.
torch::Tensor layer_norm_beyond_gemm(const torch::Tensor& x, const torch::Tensor& weight,
                                     const torch::Tensor& bias, double eps,
                                     const recipes::ElementwisePlan& plan);

// act(u) under the activation plan.
torch::Tensor activation_beyond_gemm(const torch::Tensor& u,
                                     const std::function<torch::Tensor(const torch::Tensor&)>& act,
                                     const recipes::ElementwisePlan& plan);

}  // namespace fp8lab::experiments
