#include "experiments/stats/incomplete_sweep.hpp"

#include <set>

namespace fp8lab::experiments {

std::vector<std::string> missing_runs(const std::vector<nlohmann::json>& requested,
                                      const std::vector<RunRecord>& records) {
  std::set<std::string> recorded;
  for (const auto& r : records) recorded.insert(r.run_id);
  std::set<std::string> seen;
  std::vector<std::string> missing;
  for (const auto& q : requested) {
    const auto id = q.value("run_id", std::string());
    if (!id.empty() && !recorded.contains(id) && seen.insert(id).second) missing.push_back(id);
  }
  return missing;
}

std::string incomplete_text(const std::vector<nlohmann::json>& requested,
                            const std::vector<RunRecord>& records) {
  const auto missing = missing_runs(requested, records);
  if (missing.empty()) return "";
  std::set<std::string> distinct;
  for (const auto& q : requested) distinct.insert(q.value("run_id", std::string()));
  std::string ids;
  for (std::size_t i = 0; i < missing.size() && i < 20; ++i) {
    ids.append(i == 0 ? "" : ", ").append(missing[i]);
  }
  if (missing.size() > 20) ids += ", ...";
  return "Incomplete sweep: " + std::to_string(missing.size()) + " of " +
         std::to_string(distinct.size()) + " requested runs have no record (" + ids +
         "). They errored, wait for a baseline that errored, have not run yet, or belong to a "
         "shard not merged here: fix the cause and rerun fp8lab sweep with --resume.";
}

}  // namespace fp8lab::experiments
