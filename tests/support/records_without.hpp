// Every run record of a results directory by run id, without the fields named: those that are
// timings by nature (throughput, started_at, finished_at) or say where a run ran (host), so that
// two executions of the same runs compare equal field for field.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/runner/results_store.hpp"
#include "tests/support/read_text.hpp"

namespace fp8lab::testing {

inline std::map<std::string, nlohmann::json> records_without(
    const std::filesystem::path& out, const std::vector<std::string>& fields) {
  std::map<std::string, nlohmann::json> records;
  const experiments::ResultsDirectory results(out);
  for (const auto& id : results.recorded_run_ids()) {
    auto record = nlohmann::json::parse(read_text(results.run_record_path(id)));
    for (const auto& key : fields) record.erase(key);
    records[id] = std::move(record);
  }
  return records;
}

}  // namespace fp8lab::testing
