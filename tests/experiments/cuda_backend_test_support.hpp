// Helpers of the cuda backend and shadow check tests (cuda_backend_*_test.cpp).
#pragma once

#include "experiments/fp8/shadow_check.hpp"

namespace fp8lab::experiments::test {

// A state made by SimBackend as the shadow check's DelayedStateSnapshot (history_len 0 when its
// recipe is not delayed scaling).
inline DelayedStateSnapshot sim_delayed_snapshot(const LinearScalingState& state) {
  return experiments::sim_delayed_snapshot(state);
}

}  // namespace fp8lab::experiments::test
