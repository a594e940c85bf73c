// Executes one run in this process and writes its record (results_store.hpp): the high-precision
// baseline of a (workload, seed), or one FP8 recipe compared against that baseline. Both train
// through train() (training.hpp) with the request's backend (sim unless --backend cuda); the FP8
// run also times a few steps of the baseline's Linear (sim) and of the unconverted FP32 LibTorch
// model in the same process (throughput).
//
// Every record, failed ones too, carries its provenance (provenance.hpp): the fp8lab build, the
// source of its settings, asked or upstream, the changed fields and the peer's view.
//
// Failures never escape: an exception becomes a record with status "failed" and the message.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/linear/non_finite.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/results/run_record.hpp"
#include "recipes/instability_rule.hpp"
#include "recipes/null_arms.hpp"
#include "recipes/probe_settings.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

struct RunRequest {
  std::string workload;
  std::int64_t seed = 0;
  HighPrecision high_precision = HighPrecision::fp32;  // the baseline's GEMM operands
  std::optional<std::int64_t> steps;                   // overrides the workload's schedule
  int timing_steps = 5;  // steps timed (interleaved) by the FP8 / baseline / FP32 probe
  // Where the Linears run (--backend sim|cuda) and, on cuda, the shadow check (--shadow-every N;
  // the record's "shadow_check", docs/results-schema.md).
  BackendChoice backend;
  // The per-layer statistics sidecar (layer_stats_sidecar.hpp): its rows every n-th step (0: at
  // the record rows' steps, the eval steps), and the what-if recipes measured beside the run's
  // own quantization (recipes/what_if.hpp names), baselines included. Neither changes the
  // training, so neither is part of a run id: a run recorded without them keeps its record.
  std::int64_t layer_stats_every = 0;
  std::vector<std::string> what_if;
  // The on-trajectory probes (recipes/probe_settings.hpp: `probes:`, --probe, --probe-every):
  // measured at the run's own steps, they change none, so they are no part of a run id either.
  recipes::ProbeSettings probes;
  // The pre-registered instability rule (recipes/instability_rule.hpp: the sweep's
  // `instability:`, `fp8lab run --instability`), applied to every kind of run; the record names it.
  // Not part of a run id: it judges the run's curve and stops it, it changes no step before.
  recipes::InstabilityRule instability = recipes::default_instability_rule();
  // Null runs only (execute_null_run): the arm, and the what-if recipe that sizes per_step's noise.
  recipes::NullArm null_arm = recipes::NullArm::once;
  std::string null_noise = recipes::kDefaultNullNoise;
  // FP8 runs only:
  std::optional<recipes::Recipe> recipe;  // nullopt: the baseline itself
  std::string run_id;                     // the sweep's run id (recipes/sweep.hpp)
  std::string recipe_label;               // short name for reports; empty: recipe_label(recipe)
  // Where the recipe came from and how it ran (provenance.hpp: "source", "runs_as",
  // "changed_fields", "upstream"); null: recipe_provenance(recipe), the recipe as given.
  nlohmann::json provenance;
  // Test-only (fp8lab run --inject-nan): one NaN written into a Linear's input or grad_output
  // (non_finite.hpp). The run's id then ends in "-injected", and its record says what was done.
  std::optional<FaultInjection> inject_nan;
};

// The baseline this request is compared with (run_ids.hpp).
std::string baseline_run_id(const RunRequest& request);

// The recipe as a short label: scaling, format and the fields that set it apart.
std::string recipe_label(const recipes::Recipe& recipe);

// The fields a record names its recipe (or null arm) and baseline with, kept by a failed record
// once known: an FP8 run's recipe, recipe_fields, recipe_canonical, recipe_label and
// baseline_run_id; a null run's baseline_run_id, null_arm, perturbation and recipe_label.
struct RunIdentity {
  Field<std::map<std::string, std::string>> recipe;
  Field<std::vector<std::string>> recipe_fields;
  Field<std::string> recipe_canonical, recipe_label, baseline_run_id, null_arm, perturbation;
  // Into the record: the fields set here.
  void apply_to(RunRecord& record) const;
};

// An FP8 run's identity: recipe, recipe_fields, recipe_canonical, recipe_label, baseline_run_id.
RunIdentity recipe_identity(const RunRequest& request);

// The record of a run that failed before training finished (status "failed", the message): its
// identity (run id, kind, workload, seed, backend, baseline precision), its provenance and, for an
// FP8 run, `identity` (recipe_identity) when known, so that the reports group it with its
// recipe's other seeds. Also the record the sweep writes for a run whose process died.
RunRecord failed_record(const RunRequest& request, const std::string& run_id,
                        const std::string& kind, const std::string& message,
                        const RunIdentity& identity = {});

// Runs body, which fills a run's record, writes the record and returns it. An exception from body
// makes the record a failed_record of kind instead, with identity (read when it is thrown: the
// recipe fields once known), except IoError and NotARegularFile: errors, not results, which leave
// no record (run_errors.hpp). c10::Error's backtrace is left out of the message.
RunRecord record_run(const ResultsDirectory& directory, const RunRequest& request,
                     const std::string& run_id, const std::string& kind,
                     const RunIdentity& identity, const std::function<void(RunRecord&)>& body);

// Trains the baseline, writes its record and trajectory, returns the record.
RunRecord execute_baseline(const ResultsDirectory& directory, const RunRequest& request);

// Trains the FP8 run against the baseline already in `directory` (running the baseline first
// when its record is missing), writes the record, returns it.
RunRecord execute_fp8_run(const ResultsDirectory& directory, const RunRequest& request);

// Trains the null run of the request's (workload, seed) and null_arm (null_run.hpp: the
// baseline with its initial weights rounded once to bf16, or with per-step operand noise sized by
// null_noise) against the baseline in `directory` (running it first when missing), writes the
// record (kind "null", its "null_arm"), returns it.
RunRecord execute_null_run(const ResultsDirectory& directory, const RunRequest& request);

// Torch's intra-op threads to 1: call once per process before any run. A run's --threads go to
// the sim backend only (BackendChoice::threads), because torch's own ops do not keep their bits
// across thread counts: a sum to one value over more than 32768 elements is split into one
// partial sum per thread (ATen's two-pass reduction), e.g. x.sum() of a 1000 x 1003 tensor
// differs in its last bit between 1 and 2 threads, and workloads reduce their losses that way
// (mse_loss). docs/performance.md, "Threads per run".
void use_one_torch_thread();

}  // namespace fp8lab::experiments
