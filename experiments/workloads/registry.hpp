// Workloads by name: the built-in ones (mlp, mlp-outliers, gpt-tiny, gpt-small, llama-xs, llama-s,
// llama-m, residual-mlp, and the example of a user's own model, user-example) and any a program
// registers. `fp8lab run --workload SPEC` and sweep files name workloads through this registry;
// a SPEC is a name with optional settings of its options (workload_options.hpp).
//
// Running your own LibTorch model: write a Workload (workload.hpp: your model as a TrainableModel
// whose Linears are torch::nn::Linear children called through forward_linear, your data as
// deterministic batches, your schedule), then call register_workload before the runner looks the
// name up: either from your own program that links fp8lab_experiments and then calls the sweep
// (see user_model_example.cpp, whose registration is compiled into fp8lab as "user-example"), or
// by adding its presets to register_builtin_workloads in registry.cpp. Give it an option table to
// make its sizes settable from the command line and sweep files.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "experiments/workloads/workload.hpp"
#include "experiments/workloads/workload_catalog.hpp"
#include "experiments/workloads/workload_options.hpp"

namespace fp8lab::experiments {

using WorkloadFactory = std::function<std::unique_ptr<Workload>()>;
using OptionedWorkloadFactory =
    std::function<std::unique_ptr<Workload>(const WorkloadOptionValues&)>;

// Adds (or replaces) a workload without options; the factory runs each time the workload is made.
void register_workload(const std::string& name, WorkloadFactory factory);
// Adds (or replaces) a workload with options: the factory gets every option's value.
void register_workload(const std::string& name, WorkloadOptionTable options,
                       OptionedWorkloadFactory factory);

// Makes the workload of a spec ("llama-s" or "llama-s:d_model=384"); std::invalid_argument lists
// the known names when the name is unknown, and names the option and what it accepts when a
// setting is bad.
std::unique_ptr<Workload> make_workload(const std::string& spec);

}  // namespace fp8lab::experiments
