// Helpers of the cuda backend and shadow check tests (cuda_backend_*_test.cpp).
#pragma once

#include <string>

#include "experiments/linear/shadow_check.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments::test {

// A recipe under test and the name its failures print.
struct NamedRecipe {
  std::string name;
  recipes::Recipe recipe;
};

// A state made by SimBackend as the shadow check's DelayedStateSnapshot (history_len 0 when its
// recipe is not delayed scaling).
inline DelayedStateSnapshot sim_delayed_snapshot(const LinearScalingState& state) {
  return experiments::sim_delayed_snapshot(state);
}

}  // namespace fp8lab::experiments::test
