// Runs whose model is the user's PyTorch model (fp8lab.sweep, python/fp8lab/_sweep.py): the sweep's
// workload `python`. The run's process (`fp8lab run`, started by `fp8lab sweep` as for any
// workload) starts the Python trainer (python -m fp8lab._trainer, the interpreter that called
// fp8lab.sweep) with the run's request, and that trainer only trains: it calls model_fn(seed) and
// data_fn(seed), converts the model with the run's recipe (convert_model), and hands back its
// losses, per-call quantization statistics (fp8lab._C.quantize_stats) and parameter snapshots.
// The record, the per-layer sidecar, the baseline archive, the divergence from the baseline and
// the instability verdict are this process's, through the same writers as a C++ workload's run
// (run_record.hpp). docs/python.md, "Sweeps over your model".
//
// FP8LAB_PYTHON_WORKLOAD holds the model's description as fp8lab.sweep wrote it (JSON: the
// interpreter, model_fn, data_fn, ...); the sweep's children inherit it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "experiments/results/results_store.hpp"
#include "experiments/run/run_executor.hpp"

namespace fp8lab::experiments {

inline constexpr const char* kPythonWorkload = "python";
inline constexpr const char* kPythonWorkloadVariable = "FP8LAB_PYTHON_WORKLOAD";

bool is_python_workload(const std::string& spec);

// A sweep's workloads: with FP8LAB_PYTHON_WORKLOAD set (fp8lab.sweep) every one must be `python`,
// and `python` needs it set. std::invalid_argument names the file and what is accepted.
void check_python_workloads(const std::vector<std::string>& workloads, const std::string& file);

// Trains the run in the Python trainer and writes its record (kind: baseline, fp8 or null), as
// execute_baseline, execute_fp8_run and execute_null_run do for a C++ workload.
RunRecord execute_python_run(const ResultsDirectory& directory, const RunRequest& request,
                             const std::string& kind);

}  // namespace fp8lab::experiments
