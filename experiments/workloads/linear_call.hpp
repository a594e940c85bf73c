// Calls whatever module sits at a Linear's place in a workload model. Workloads register each
// Linear as a named child and look it up at every forward, because convert_model replaces the
// registered child (a C++ member pointer to the old Linear would keep calling the old one).
#pragma once

#include <torch/torch.h>

#include <string>

namespace fp8lab::experiments {

// forward(x) of the child `name` of `parent`: a torch::nn::Linear, or the FP8 / high-precision
// Linear that convert_model put there. Throws std::runtime_error naming the child and its type
// when the child is none of these.
torch::Tensor forward_linear(torch::nn::Module& parent, const std::string& name,
                             const torch::Tensor& x);

}  // namespace fp8lab::experiments
