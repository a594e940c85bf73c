// The numbers of one probe row (experiments/results/probe_sidecar.hpp): a gradient g_q against a
// reference gradient g, and the AdamW updates the two give, in float64. Pure tensor arithmetic:
// no model, no training.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "experiments/results/probe_sidecar.hpp"

namespace fp8lab::experiments {

// Sets row's grad_norm, error_norm, cosine, rel_error, bias, noise and chmiel_ratio from flat
// float64 g_q and g (probe_sidecar.hpp defines each). A zero g gives NaN for the relative ones.
void set_gradient_metrics(ProbeRow& row, const torch::Tensor& g_q, const torch::Tensor& g);

// One AdamW step's inputs, as torch::optim::AdamW takes them (its step(): decoupled weight decay
// p *= 1 - lr * wd, then p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)).
struct AdamWStep {
  double lr = 0.0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  double grad_clip = 0.0;  // > 0: each gradient clipped to this total norm first (as training)
};
// One parameter's moments before the step (an absent state: zeros and step 0).
struct AdamWMoments {
  torch::Tensor exp_avg, exp_avg_sq;  // flat float64, or undefined for a fresh state
  std::int64_t step = 0;
};

// The AdamW step's hyperparameters and each named parameter's moments, read from `optimizer`
// (one parameter group) before its step; `parameters` in the order of the gradients compared.
AdamWStep adamw_step(const torch::optim::AdamW& optimizer, double grad_clip);
std::vector<AdamWMoments> adamw_moments(const torch::optim::AdamW& optimizer,
                                        const std::vector<torch::Tensor>& parameters);

// The change of each parameter that AdamW would make from `grads` (flat float64 per tensor,
// clipped together by their own total norm when step.grad_clip > 0) at `weights`.
std::vector<torch::Tensor> adamw_updates(const std::vector<torch::Tensor>& grads,
                                         const std::vector<torch::Tensor>& weights,
                                         const std::vector<AdamWMoments>& moments,
                                         const AdamWStep& step);

// The cosine and relative error ||u_q - u|| / ||u|| of two updates, into row's update columns.
void set_update_metrics(ProbeRow& row, const torch::Tensor& u_q, const torch::Tensor& u);

}  // namespace fp8lab::experiments
