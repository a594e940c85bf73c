// Workload "residual-mlp": the student/teacher proxy of Su et al. 2025, "Characterization and
// Mitigation of Training Instabilities in Microscaling Formats" (arXiv 2506.20752; their script
// olmo/synthetic/student_teacher_v3.py of github KempnerInstitute/systems-scaling).
//
// Student: `depth` residual blocks x + fc2(act(fc1(LayerNorm(x)))), LayerNorm with affine weight
// and bias, fc1 without bias, fc2 with bias; act GeLU (fc1: d -> 4d) or SwiGLU (fc1: d -> 2h,
// a * silu(b) of its two halves, h = 8d/3 rounded up to a multiple of 32; their script rounds to
// the nearest integer, 1365 at d 512, which no FP8 block size divides). Its output is the residual
// stream itself. Teacher: a frozen random MLP of the same depth (Linear(d, d) -> act ->
// Linear(d, d) per block, their teacher_width defaulting to the width; SwiGLU: Linear(d, 2h),
// h = round(2d/3); no residual, no bias, torch's default uniform init), the same for every seed
// (their script draws it from the run's seed). Data: Gaussian inputs x ~ N(0, I_d); training
// targets teacher(x) + noise * N(0, 1) (label noise, new each step); eval targets teacher(x)
// without noise, on fixed batches. Loss: MSE.
// Optimizer: Adam (AdamW, weight decay 0), betas (0.9, 0.999), constant learning rate.
//
// Two options follow their code where it differs from the plain model (issue 31 §8, the faithful
// L3 arm; both default to the plain model, so every earlier run id stays):
//   teacher: data   the teacher computes the targets in fp32 with the data (as before);
//            model  the teacher is a frozen part of the model (modules teacher.block<i>.fc1/fc2,
//                   no gradient): convert_model converts its Linears with the student's, so an FP8
//                   run's targets go through the same FP8 / MX GEMMs, as their injected
//                   microxcaling ops ran the teacher (its GeLU stays fp32; theirs ran through
//                   microxcaling's bf16 gelu). A batch then carries the label noise as its target.
//   norm_bias: trained | frozen   frozen: the LayerNorm biases keep their initial 0 and get no
//                   gradient, as microxcaling's LayerNorm returns none for the bias.
// Frozen parameters are no part of the snapshots' relative L2 distances (training.cpp).
//
// Defaults: the paper's text for the shape (depth 4, d 512, batch 2048, label noise 1e-3) and the
// script for the rest (7000 steps, Adam lr 1e-3 constant, 4 eval batches of 2048, GeLU). That is
// about 100 GFLOP per step, hours on a CPU: CPU runs scale it down with options (d, depth, batch,
// steps). The script's own defaults differ: depth 8, batch 512, noise 0.005.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "experiments/linear/beyond_gemm.hpp"
#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

// One residual block of the student, public for the gradient test. A recipe's
// norm_affine_precision and activation_precision apply to its LayerNorm and activation
// (experiments/linear/beyond_gemm.hpp), as microxcaling applied them in Su et al.'s runs.
class ResidualBlockImpl : public torch::nn::Module, public BeyondGemmQuantizable {
 public:
  ResidualBlockImpl(std::int64_t d, const std::string& activation, bool frozen_norm_bias = false);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  bool swiglu_;
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(ResidualBlock);

// residual-mlp. Options d, depth, activation, batch, noise, eval_batches, eval_batch, teacher,
// norm_bias and the schedule's.
std::vector<WorkloadPreset> residual_mlp_workloads();

}  // namespace fp8lab::experiments
