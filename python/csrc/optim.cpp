// fp8lab.optim (python/fp8lab/optim.py): the optimizer step of `fp8lab run`, run by LibTorch itself
// so that a Python training loop gets the same bits (experiments/run/training.cpp).
// torch.optim.AdamW (Python) updates exp_avg with lerp_ where LibTorch's torch::optim::AdamW uses
// mul_/add_, and torch.nn.utils.clip_grad_norm_ takes a foreach norm: each differs in the last
// bits. So the Python optimizer holds a torch::optim::AdamW (torch.classes.fp8lab.AdamW), and the
// learning-rate schedule is experiments/workloads/learning_rate.hpp's, the one training.cpp uses.
#include <torch/custom_class.h>
#include <torch/library.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <vector>

#include "experiments/workloads/learning_rate.hpp"

namespace fp8lab::python {
namespace {

class LibTorchAdamW : public torch::CustomClassHolder {
 public:
  // As training.cpp's make_optimizer: one group of every parameter.
  LibTorchAdamW(std::vector<at::Tensor> params, double lr, double beta1, double beta2, double eps,
                double weight_decay)
      : params_(params),
        optimizer_(std::move(params), torch::optim::AdamWOptions(lr)
                                          .betas({beta1, beta2})
                                          .eps(eps)
                                          .weight_decay(weight_decay)) {}
  void step() { optimizer_.step(); }
  // As training.cpp's set_learning_rate.
  void set_lr(double lr) {
    for (auto& group : optimizer_.param_groups()) {
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    }
  }
  // As training.cpp before each step: the global L2 norm of the gradients clipped to max_norm.
  double clip_grad_norm(double max_norm) {
    return torch::nn::utils::clip_grad_norm_(params_, max_norm);
  }

 private:
  std::vector<at::Tensor> params_;
  torch::optim::AdamW optimizer_;
};

double learning_rate(double lr, int64_t warmup_steps, double final_lr_fraction, int64_t step,
                     int64_t steps) {
  return experiments::learning_rate_at(lr, warmup_steps, final_lr_fraction, step, steps);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(fp8lab, m) {
  m.class_<LibTorchAdamW>("AdamW")
      .def(torch::init<std::vector<at::Tensor>, double, double, double, double, double>())
      .def("step", &LibTorchAdamW::step)
      .def("set_lr", &LibTorchAdamW::set_lr)
      .def("clip_grad_norm", &LibTorchAdamW::clip_grad_norm);
  m.def("learning_rate(float lr, int warmup_steps, float final_lr_fraction, int step, int steps) "
        "-> float",
        &learning_rate);
}

}  // namespace fp8lab::python
