// What the workload registry (registry.hpp) knows, for code that only names workloads: the CLI's
// checks, run ids, the sweep driver. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "experiments/workloads/workload_options.hpp"

namespace fp8lab::experiments {

std::vector<std::string> workload_names();  // sorted

// The option table of a registered workload; std::invalid_argument when the name is unknown.
WorkloadOptionTable workload_option_table(const std::string& name);

// The canonical text of a spec (workload_options.hpp): settings checked, defaults dropped, keys
// sorted. std::invalid_argument names the unknown workload, option or bad value.
std::string canonical_workload(const std::string& spec);

// The name and every option's value of a spec (checked as canonical_workload checks it).
struct ResolvedWorkload {
  std::string name;
  WorkloadOptionValues values;
};
ResolvedWorkload resolve_workload(const std::string& spec);

// Replaces each spec of a sweep file's workloads by its canonical text, so that a run's id does
// not depend on how its options were spelt; std::invalid_argument names `file` and the problem.
void canonicalize_workloads(std::vector<std::string>& specs, const std::string& file);

}  // namespace fp8lab::experiments
