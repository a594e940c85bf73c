#include "experiments/workloads/workload.hpp"

#include <ATen/CPUGeneratorImpl.h>

namespace fp8lab::experiments {

torch::Generator make_generator(std::uint64_t seed, std::uint64_t stream) {
  // splitmix64 of (seed, stream): nearby seeds and streams give unrelated Mersenne Twister seeds.
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + stream + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return at::make_generator<at::CPUGeneratorImpl>(z);
}

torch::Generator step_generator(std::uint64_t seed, std::int64_t step) {
  return make_generator(seed, static_cast<std::uint64_t>(step) + 1);
}

torch::Generator eval_generator(std::int64_t i) {
  return make_generator(0xE7A1, (1ULL << 62) + static_cast<std::uint64_t>(i));
}

OptionFields<TrainingSchedule> schedule_fields() {
  using S = TrainingSchedule;
  return {
      integer_field("steps", &S::steps, 1, 100000000, "training steps"),
      integer_field("eval_every", &S::eval_every, 1, 100000000, "steps between evaluations"),
      integer_field("early_eval_stride", &S::early_eval_stride, 1, 1 << 20,
                    "evals no verdict reads (after step 0, before the last 10%) use every n-th "
                    "eval batch (1: the whole eval set)"),
      integer_field("warmup", &S::warmup_steps, 0, 100000000, "linear learning-rate warm-up steps"),
      real_field("lr", &S::learning_rate, 0.0, 10.0, "peak learning rate (AdamW)"),
      real_field("final_lr_fraction", &S::final_lr_fraction, 0.0, 1.0,
                 "cosine decay to lr x this at the last step (1: constant)"),
      real_field("weight_decay", &S::weight_decay, 0.0, 10.0, "AdamW weight decay"),
      real_field("grad_clip", &S::grad_clip, 0.0, 1e6,
                 "clip the global gradient norm to this (0: off)"),
      real_field("beta1", &S::beta1, 0.0, 0.999999, "AdamW beta1"),
      real_field("beta2", &S::beta2, 0.0, 0.999999, "AdamW beta2"),
  };
}

}  // namespace fp8lab::experiments
