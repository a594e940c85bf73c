// The on-trajectory probes of one run (probe_engine.hpp) as the executor uses them: attached to
// the run's training options when its request asks for them, their rows written after training
// into DIR/probes/<run_id>.parquet (probe_sidecar.hpp), which the record names as
// "probe_sidecar". A request without probes attaches nothing and leaves the record as it was.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "experiments/results/results_store.hpp"
#include "experiments/run/probe_engine.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/run/training.hpp"

namespace fp8lab::experiments {

// Where a run's probe models run: the run's workload, seed, high precision, backend and device.
ProbeModels probe_models(const RunRequest& request, const Workload& workload);

class RunProbes {
 public:
  // A baseline probes request.probes's recipes (kOnBaseline) when it names any.
  static RunProbes for_baseline(const RunRequest& request, const Workload& workload,
                                TrainingOptions& options);
  // An FP8 run probes the exact step at its own weights (kExactOnRun) when probes are on
  // (request.probes.every > 0); `label` is the run's recipe label.
  static RunProbes for_fp8_run(const RunRequest& request, const Workload& workload,
                               const std::string& label, TrainingOptions& options);

  // Writes the sidecar (before the record, as the layer-statistics sidecar) and names it in the
  // record; no key at all when the run had no probes.
  void add_sidecar(RunRecord& record, const ResultsDirectory& directory,
                   const std::string& run_id) const;

 private:
  std::shared_ptr<BaselineProbes> baseline_;
  std::shared_ptr<ExactOnRunProbes> exact_;
};

}  // namespace fp8lab::experiments
