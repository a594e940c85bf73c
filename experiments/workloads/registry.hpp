// Workloads by name: the built-in ones (mlp, mlp-outliers, gpt-tiny, gpt-small, and the example of
// a user's own model, user-example) and any a program registers. `fp8lab run --workload NAME` and
// sweep files name workloads through this registry.
//
// Running your own LibTorch model: write a Workload (workload.hpp: your model as a TrainableModel
// whose Linears are torch::nn::Linear children called through forward_linear, your data as
// deterministic batches, your schedule), then call register_workload before the runner looks the
// name up: either from your own program that links fp8lab_experiments and then calls the sweep
// (see user_model_example.cpp, whose registration is compiled into fp8lab as "user-example"), or
// by adding one line to register_builtin_workloads in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

using WorkloadFactory = std::function<std::unique_ptr<Workload>()>;

// Adds (or replaces) a workload; the factory runs each time the workload is made.
void register_workload(const std::string& name, WorkloadFactory factory);

// Makes the named workload; std::invalid_argument lists the known names when it is unknown.
std::unique_ptr<Workload> make_workload(const std::string& name);

std::vector<std::string> workload_names();  // sorted

}  // namespace fp8lab::experiments
