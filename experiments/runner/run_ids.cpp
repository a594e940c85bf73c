#include "experiments/runner/run_ids.hpp"

#include <cstdio>

#include "experiments/runner/results_store.hpp"
#include "recipes/canonical.hpp"

namespace fp8lab::experiments {

std::string baseline_run_id(const std::string& workload, std::int64_t seed,
                            HighPrecision high_precision, std::optional<std::int64_t> steps) {
  // Appends (not operator+ chains): GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  std::string id = "baseline-";
  id.append(workload).append("-seed").append(std::to_string(seed));
  id.append("-").append(name(high_precision));
  if (steps) id.append("-steps").append(std::to_string(*steps));
  check_run_id(id);
  return id;
}

std::string sweep_run_id(const recipes::Recipe& recipe, const std::string& workload,
                         std::int64_t seed) {
  std::string key = recipes::canonical_string(recipes::canonicalize(recipe).recipe);
  key.append(";workload=").append(workload).append(";seed=").append(std::to_string(seed));
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64, as recipes/sweep.cpp
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

}  // namespace fp8lab::experiments
