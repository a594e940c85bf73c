// The FP8 run a sweep hands to the process it starts for it (sweep_driver.hpp):
// DIR/jobs/<run_id>.json, written by the sweep before it starts `fp8lab run --job FILE --run-id ID`
// and removed once that process has exited. It holds what the sweep already knows of the run (its
// id, workload, seed, canonical recipe and provenance), so that the process never reads, parses or
// expands the sweep file again: an edit of the sweep file during a sweep changes none of its runs.
// The options every run of the sweep shares (--steps, --backend, ...) stay on the command line.
// No LibTorch.
#pragma once

#include <filesystem>
#include <string>

#include "experiments/results/results_store.hpp"
#include "experiments/run/run_executor.hpp"

namespace fp8lab::experiments {

std::filesystem::path run_job_path(const ResultsDirectory& directory, const std::string& run_id);

// Writes the request's run_id, workload, seed, recipe (recipes/complete_recipe.hpp) and provenance
// to run_job_path atomically (ResultsDirectory::write_file: never through a link at jobs/).
void write_run_job(const ResultsDirectory& directory, const RunRequest& request);

// Sets those fields of `request` from the job file. std::runtime_error naming the file when it
// cannot be read or is not a job file, or when its recipe does not read back to the canonical
// recipe the sweep wrote.
void read_run_job(const std::filesystem::path& path, RunRequest& request);

}  // namespace fp8lab::experiments
