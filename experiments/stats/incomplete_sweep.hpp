// Whether the records cover every run a sweep asked for (sweep.json "requested"): a run without a
// record errored, waits for a baseline that errored, has not run yet, or belongs to a shard not
// merged here (experiments/sweep/run_errors.hpp). The reports say so at their top, and
// `fp8lab report` exits 3. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

// The run ids of `requested` (sweep.json rows) that no record in `records` has, each once, in the
// order requested.
std::vector<std::string> missing_runs(const std::vector<nlohmann::json>& requested,
                                      const std::vector<RunRecord>& records);

// "" when none is missing; else "Incomplete sweep: 3 of 8 requested runs have no record (id, id,
// ...). They errored, ...: fix the cause and rerun fp8lab sweep with --resume."
std::string incomplete_text(const std::vector<nlohmann::json>& requested,
                            const std::vector<RunRecord>& records);

}  // namespace fp8lab::experiments
