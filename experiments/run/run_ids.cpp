#include "experiments/run/run_ids.hpp"

#include "experiments/results/results_store.hpp"
#include "experiments/workloads/workload_options.hpp"

namespace fp8lab::experiments {

std::string baseline_run_id(const std::string& workload, std::int64_t seed,
                            HighPrecision high_precision, std::optional<std::int64_t> steps) {
  // Appends (not operator+ chains): GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  std::string id = "baseline-";
  // A workload with options is spelt as a file name: llama-s:d_model=384 -> llama-s.d_model-384.
  id.append(workload_file_name(workload)).append("-seed").append(std::to_string(seed));
  id.append("-").append(name(high_precision));
  if (steps) id.append("-steps").append(std::to_string(*steps));
  check_run_id(id);
  return id;
}

std::string fp8_run_id(const std::string& recipe_id, std::optional<std::int64_t> steps,
                       const BackendChoice& backend) {
  std::string id = recipe_id;
  if (steps) id.append("-steps").append(std::to_string(*steps));
  check_run_id(id);
  return placed_run_id(id, backend);
}

std::string placed_run_id(const std::string& id, const BackendChoice& backend) {
  return backend.trains_on_cuda() ? id + "-cuda" : id;
}

}  // namespace fp8lab::experiments
