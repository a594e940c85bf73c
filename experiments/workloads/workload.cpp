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

}  // namespace fp8lab::experiments

namespace fp8lab::experiments {

WorkloadOptionTable schedule_option_table(const TrainingSchedule& d) {
  return {
      integer_option("steps", d.steps, 1, 100000000, "training steps"),
      integer_option("eval_every", d.eval_every, 1, 100000000, "steps between evaluations"),
      integer_option("warmup", d.warmup_steps, 0, 100000000, "linear learning-rate warm-up steps"),
      real_option("lr", d.learning_rate, 0.0, 10.0, "peak learning rate (AdamW)"),
      real_option("final_lr_fraction", d.final_lr_fraction, 0.0, 1.0,
                  "cosine decay to lr x this at the last step (1: constant)"),
      real_option("weight_decay", d.weight_decay, 0.0, 10.0, "AdamW weight decay"),
      real_option("grad_clip", d.grad_clip, 0.0, 1e6,
                  "clip the global gradient norm to this (0: off)"),
      real_option("beta1", d.beta1, 0.0, 0.999999, "AdamW beta1"),
      real_option("beta2", d.beta2, 0.0, 0.999999, "AdamW beta2"),
  };
}

TrainingSchedule schedule_from(TrainingSchedule s, const WorkloadOptionValues& values) {
  s.steps = values.integer("steps");
  s.eval_every = values.integer("eval_every");
  s.warmup_steps = values.integer("warmup");
  s.learning_rate = values.real("lr");
  s.final_lr_fraction = values.real("final_lr_fraction");
  s.weight_decay = values.real("weight_decay");
  s.grad_clip = values.real("grad_clip");
  s.beta1 = values.real("beta1");
  s.beta2 = values.real("beta2");
  return s;
}

}  // namespace fp8lab::experiments
