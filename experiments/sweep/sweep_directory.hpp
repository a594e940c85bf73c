// The sweep's part of its results directory (docs/results-schema.md): sweep.json, written once
// the directory is checked to hold this configuration's results only, and FP8 records filed
// before run ids named --steps.
#pragma once

#include <cstdint>
#include <string>

#include "experiments/results/results_store.hpp"
#include "experiments/sweep/sweep_driver.hpp"
#include "recipes/sweep.hpp"

namespace fp8lab::experiments {

// Checks that DIR holds this configuration's results only and writes its sweep.json.
void record_sweep(const SweepOptions& options, const ResultsDirectory& directory,
                  const recipes::SweepExpansion& expansion, const std::string& text);

// FP8 run ids name --steps since issue 19; a directory swept with --steps before holds its FP8
// records under the id without them. --resume renames such a record to the new id when it is a
// record of these steps (sweep.json already holds the directory to one --steps; steps_planned is
// checked too), so that the run is not run again; any other record stays as it is.
void adopt_record_without_steps(const ResultsDirectory& directory, const std::string& old_id,
                                const std::string& id, std::int64_t steps);

}  // namespace fp8lab::experiments
