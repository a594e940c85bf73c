// Helpers of the cuda backend and shadow check tests (cuda_backend_*_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "experiments/fp8/shadow_check.hpp"
#include "experiments/fp8/sim_backend.hpp"
#include "sim/scaling/delayed.hpp"

namespace fp8lab::experiments::test {

// A state made by SimBackend as the shadow check's DelayedStateSnapshot (history_len 0 when its
// recipe is not delayed scaling).
inline DelayedStateSnapshot sim_delayed_snapshot(const LinearScalingState& state) {
  DelayedStateSnapshot snap;
  const sim::scaling::DelayedScalingLinear* d = SimBackend::delayed_state(state);
  if (d == nullptr) return snap;
  const auto pass = [&](const sim::scaling::DelayedScalingState& p, std::vector<float>& history,
                        std::vector<float>& scale, std::int64_t& updates) {
    for (std::int64_t row = 0; row < p.history_len(); ++row) {
      for (std::int64_t slot = 0; slot < p.slots(); ++slot) history.push_back(p.history(row, slot));
    }
    for (std::int64_t slot = 0; slot < p.slots(); ++slot) scale.push_back(p.scale(slot));
    updates = p.update_count();
  };
  snap.history_len = d->forward().history_len();
  pass(d->forward(), snap.forward_history, snap.forward_scale, snap.forward_updates);
  pass(d->backward(), snap.backward_history, snap.backward_scale, snap.backward_updates);
  return snap;
}

}  // namespace fp8lab::experiments::test
