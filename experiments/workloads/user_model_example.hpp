// How to run your own LibTorch model through fp8lab: this file is the worked example, compiled
// into fp8lab as workload "user-example" (`fp8lab run --workload user-example --recipe FILE`).
// Copy its shape for your model:
//   1. your model derives from TrainableModel and registers each Linear as a named
//      torch::nn::Linear child, called through forward_linear(*this, "name", x);
//   2. loss(batch) returns the scalar your training minimises;
//   3. your Workload gives deterministic train batches (a pure function of step and seed, from
//      make_generator) and a fixed eval set;
//   4. register it: register_workload("my-model", [] { return std::make_unique<MyWorkload>(); });
//      from your own program before it calls the runner, or beside "user-example" in registry.cpp.
#pragma once

#include <memory>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

std::unique_ptr<Workload> make_user_model_example();

}  // namespace fp8lab::experiments
