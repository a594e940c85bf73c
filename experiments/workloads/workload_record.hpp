// What every run record says about its workload beyond its spec and description
// (docs/results-schema.md): the registered name, every option's value and the parameter counts.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

// {"workload_name", "workload_options", "parameter_count", "non_embedding_parameter_count"} of a
// canonical spec and its workload (the counts from a model made with seed 0).
nlohmann::json workload_record_fields(const std::string& spec, const Workload& workload);

}  // namespace fp8lab::experiments
