// The parts of a run's record (docs/results-schema.md) that every way of training a run shares:
// the C++ workloads' execute_* (run_executor.cpp) and the Python models'
// (python_run.hpp). One record writer: a trainer hands over its TrainingResult, these fill the
// typed RunRecord (results/run_record.hpp), which results/ writes.
#pragma once

#include <cstdint>
#include <string>

#include "experiments/linear/linear_stats.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/run/training.hpp"

namespace fp8lab::experiments {

std::string now_utc();    // "2026-12-04T11:29:43Z"
std::string host_name();  // gethostname, "" when unknown

// The record's "layers" row of one operand's statistics of one Linear (the loop sets its step).
LayerRow layer_record_row(const std::string& layer, Operand tensor, Gemm role,
                          const OperandStats& op);

// The build and the provenance of the request's recipe (a baseline's or null run's: the
// baseline's) into the record.
void add_provenance(RunRecord& record, const RunRequest& request, const char* kind);
// The fields every record of a run starts with, whoever trains it (run_executor, python_run, a
// failed run): schema, run id, kind, workload, seed, backend, precision, host, machine and the
// provenance; each caller adds its own times and status.
RunRecord record_head(const RunRequest& request, const std::string& run_id, const char* kind);
// The instability rule the run is judged by, as text and in words.
void add_instability_rule(RunRecord& record, const RunRequest& request);
// Status, train and eval rows against the baseline (null: none), "layers", "final" and
// "throughput" of a finished training.
void add_training(RunRecord& record, const TrainingResult& t, const RunRecord* baseline);
// Writes the run's per-layer sidecar (before its record) and names it in the record.
void add_layer_stats_sidecar(RunRecord& record, const ResultsDirectory& directory,
                             const std::string& run_id, const TrainingResult& t);
// The threads the run's step used (throughput.threads, torch_threads).
void add_threads(RunRecord& record, const RunRequest& request);
// A baseline's parameter names, snapshot steps and its trajectory archive
// (baselines/<run_id>.pt, baseline_archive.hpp), written now.
void add_baseline_archive(RunRecord& record, const ResultsDirectory& directory,
                          const std::string& run_id, const TrainingResult& result);
// The finished (or unstable) baseline record of the request, read from the directory or trained
// now; throws unless it finished. Its losses and snapshots, read back.
RunRecord finished_baseline(const ResultsDirectory& directory, const RunRequest& request);
BaselineReference load_reference(const ResultsDirectory& directory, const RunRecord& baseline);

}  // namespace fp8lab::experiments
