// How a run ran, and what the peer library would do with it, as the report rows show it (record
// fields `runs_as`, `changed_fields` and `upstream`, docs/results-schema.md). No LibTorch.
//
// Records from before those fields existed say "not recorded": the report never guesses.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

// "as asked", "upstream (amax_compute_algo most_recent -> max)" (the fields it ran changed),
// "baseline", or "not recorded".
std::string runs_as_text(const RunRecord& record);

struct UpstreamMark {
  bool differs = false;  // the peer would change or refuse this run as it ran
  std::string text;      // "accelerate + TE would change: ...", "... refuses: ...", "not recorded"
};

// What accelerate + TE / torchao would do with the run's settings (record field `upstream`).
UpstreamMark upstream_mark(const RunRecord& record);

// The same in a few words for a table cell whose full text goes to a footnote or a hover:
// "TE refuses (E5M2)", "TE changes 2 fields", "torchao: same", "not recorded".
std::string short_upstream_mark(const RunRecord& record);

}  // namespace fp8lab::experiments
