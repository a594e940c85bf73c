// The first non-finite value of a run (the record's "first_non_finite",
// experiments/linear/non_finite.hpp) as one paragraph for the reports: where, what was around it,
// and the amax/scale history of that tensor just before.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

// Empty when the record has no first_non_finite site (null or absent).
std::string first_non_finite_text(const RunRecord& record);

}  // namespace fp8lab::experiments
