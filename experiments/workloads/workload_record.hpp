// What every run record says about its workload beyond its spec and description
// (docs/results-schema.md): the registered name, every option's value and the parameter counts.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "experiments/workloads/workload.hpp"

namespace fp8lab::experiments {

// The record's workload_name, workload_options, parameter_count and
// non_embedding_parameter_count.
struct WorkloadFacts {
  std::string name;
  nlohmann::json options;  // every option's value (WorkloadOptions::to_json)
  std::int64_t parameter_count = 0;
  std::int64_t non_embedding_parameter_count = 0;
};

// The facts of a canonical spec and its workload (the counts from a model made with seed 0).
WorkloadFacts workload_facts(const std::string& spec, const Workload& workload);

}  // namespace fp8lab::experiments
