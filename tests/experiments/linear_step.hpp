// One training step of a lone Fp8Linear on the sim backend, inside an FP8 autocast region:
// y = x w^T + b, then the gradients of y . g. The Linear tests compare its outputs with what
// the backend's GEMMs give on the same operands.
#pragma once

#include <torch/torch.h>

#include <memory>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments::test {

struct LinearStep {
  torch::Tensor y, dx, dw, db;
};

inline LinearStep fp8_linear_step(const recipes::Recipe& recipe, const torch::Tensor& x,
                                  const torch::Tensor& w, const torch::Tensor& b,
                                  const torch::Tensor& g) {
  auto backend = std::make_shared<const SimBackend>();
  Fp8LinearImpl layer(w.clone().requires_grad_(true), b.clone().requires_grad_(true), recipe,
                      backend, HighPrecision::fp32);
  const torch::Tensor xv = x.clone().requires_grad_(true);
  torch::Tensor y;
  {
    Fp8Autocast fp8(true);
    y = layer.forward(xv);
  }
  y.backward(g);
  return {y.detach(), xv.grad(), layer.weight.grad(), layer.bias.grad()};
}

}  // namespace fp8lab::experiments::test
