// The learning rate of a TrainingSchedule (workload.hpp) at a step: a linear rise over
// warmup_steps, then a cosine from learning_rate down to learning_rate * final_lr_fraction at the
// last step. No LibTorch, so that the Python package (fp8lab.optim.learning_rate) computes the
// same doubles as `fp8lab run` from this one definition.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace fp8lab::experiments {

inline double learning_rate_at(double learning_rate, std::int64_t warmup_steps,
                               double final_lr_fraction, std::int64_t step, std::int64_t steps) {
  if (step < warmup_steps) {
    return learning_rate * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  }
  const auto decay_steps = std::max<std::int64_t>(1, steps - 1 - warmup_steps);
  const double progress =
      std::min(1.0, static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps));
  const double cosine = 0.5 * (1.0 + std::cos(3.14159265358979323846 * progress));
  return learning_rate * (final_lr_fraction + (1.0 - final_lr_fraction) * cosine);
}

}  // namespace fp8lab::experiments
