#include "experiments/workloads/workload_record.hpp"

#include <algorithm>

#include "experiments/workloads/workload_catalog.hpp"

namespace fp8lab::experiments {

WorkloadFacts workload_facts(const std::string& spec, const Workload& workload) {
  const auto resolved = resolve_workload(spec);
  const auto model = workload.make_model(0);
  const auto embeddings = model->embedding_parameter_names();
  std::int64_t all = 0, non_embedding = 0;
  for (const auto& item : model->named_parameters()) {
    all += item.value().numel();
    if (std::find(embeddings.begin(), embeddings.end(), item.key()) == embeddings.end()) {
      non_embedding += item.value().numel();
    }
  }
  return {resolved.name, resolved.values.to_json(), all, non_embedding};
}

}  // namespace fp8lab::experiments
