// One training run of a workload: the loop both the baseline and every FP8 run go through, so that
// they see the same batches in the same order and differ only in the Linears convert_model put in
// the model. Collects what results.jsonl records per step (docs/results-schema.md).
#pragma once

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/results/run_record.hpp"
#include "experiments/run/quantized_adamw.hpp"
#include "experiments/workloads/workload.hpp"
#include "recipes/instability_rule.hpp"

namespace fp8lab::experiments {

// The flat parameters and gradients of a model at one step, in sorted parameter-name order.
struct ModelSnapshot {
  std::int64_t step = 0;
  torch::Tensor weights;    // after the optimizer step of `step`
  torch::Tensor gradients;  // of the loss of `step`
};

// What a run is compared against: the baseline's losses and snapshots, from its record and its
// trajectory file (baseline_store.hpp).
struct BaselineReference {
  std::string run_id;
  std::vector<double> train_loss;                     // per step
  std::vector<std::pair<std::int64_t, double>> eval;  // (step, eval loss)
  std::vector<ModelSnapshot> snapshots;               // at the eval steps
  std::vector<std::string> parameter_names;
};

// What the Linears measured during one training step (read and reset after the step).
struct StepMeasurements {
  std::vector<LayerRow> rows;  // the record's, per layer and operand; the loop sets their step
  // The sidecar's rows of the step (layer_stats_sidecar.hpp); the loop sets their step.
  std::vector<LayerStatsRow> sidecar_rows;
  double gemm_seconds = 0.0;
};

// How the run changes the model and what it reads back from it. Empty functions are skipped.
struct ModelHooks {
  std::function<void(TrainableModel&)> convert;  // swaps the Linears (FP8 or high-precision)
  // Called after every training step; `want_rows` says whether this step logs statistics rows
  // (the record's or the sidecar's: the loop keeps each on its own steps, TrainingOptions).
  // Must reset what it read, so that the next call sees the next step only.
  std::function<StepMeasurements(TrainableModel&, bool want_rows)> take_step_measurements;
  // The recipe's use_autocast_during_eval (the seed API's contextual autocast): eval passes run
  // without FP8 unless true.
  bool use_autocast_during_eval = false;
  // Called before each training step (and before the eval passes after it, whose quantizations
  // count into the next step's figures) with whether those figures are logged, as
  // take_step_measurements's want_rows: Linears measure their operands only then.
  std::function<void(TrainableModel&, bool want_rows)> measure_operands;
  // Called with the step's index before each training step's forward pass, and after its
  // optimizer step but before take_step_measurements (which resets the statistics): the run's
  // diagnostics (run_diagnostics.hpp: the first-non-finite watch, the autoswitch rule).
  std::function<void(TrainableModel&, std::int64_t step)> before_step;
  std::function<void(TrainableModel&, std::int64_t step)> after_step;
  // Where the model and its batches live: CUDA for a backend with a resident path (--backend
  // cuda; docs/architecture.md, "The cuda backend's memory"), else the CPU. The model moves after
  // convert; snapshots are copied back to the CPU.
  torch::Device device = torch::kCPU;
};

// What one run keeps in memory and in its record, whatever its length (a run of 10^8 steps used to
// grow without bound): at most kMaxTrainRows training-loss rows, and kMaxEvalPoints evaluations
// with their snapshots (baselines), divergence and statistics rows. A longer run logs every k-th
// step (k = ceil(steps / kMaxTrainRows)) and evaluates every m-th multiple of the schedule's
// eval_every (m = ceil(evaluations / kMaxEvalPoints)); the last step is always logged and
// evaluated; a diverging step is always logged. Every workload's default schedule is within both.
inline constexpr std::int64_t kMaxTrainRows = 4096;
inline constexpr std::int64_t kMaxEvalPoints = 256;

// A training step between its backward pass and its gradient clipping and optimizer step: what
// TrainingOptions::after_backward sees (the on-trajectory probes, probe_engine.hpp). The model's
// weights are the step's (before its update), its gradients the step's loss's (before clipping),
// the optimizer's state from before the step, its learning rate the step's.
struct StepAfterBackward {
  std::int64_t step = 0;
  std::int64_t steps_planned = 0;
  TrainableModel& model;
  const Batch& batch;
  double loss = 0.0;
  const torch::optim::AdamW& optimizer;
  double grad_clip = 0.0;                           // the schedule's (0: none)
  const std::vector<std::string>& parameter_names;  // the trained ones, sorted (ModelSnapshot)
};

struct TrainingOptions {
  std::uint64_t seed = 0;
  std::optional<std::int64_t> steps;  // overrides the workload's schedule
  std::int64_t statistics_every = 0;  // the record's "layers" rows; 0: at the eval steps
  // The sidecar's rows (TrainingResult::layer_stats_rows): every n-th step and the last; 0: on
  // the record rows' steps. At most kMaxTrainRows steps are kept: a longer run keeps every k-th
  // multiple of n (k = ceil(steps / n / kMaxTrainRows)).
  std::int64_t layer_stats_every = 0;
  bool keep_snapshots = false;  // the baseline keeps them for the runs
  // The pre-registered instability rule (recipes/instability_rule.hpp); nullopt: none applied.
  // A run that meets it gets status "unstable" and, with stop_when_unstable, stops at that step
  // (its record ends there). A baseline runs on: every run of its seed compares with its curve.
  std::optional<recipes::InstabilityRule> instability;
  bool stop_when_unstable = true;
  // Called after every step's backward pass (StepAfterBackward); it must change nothing of the
  // model, its gradients, the optimizer or the global RNG.
  std::function<void(const StepAfterBackward&)> after_backward;
  // Called after each step with (completed steps, total): progress lines.
  std::function<void(std::int64_t, std::int64_t)> on_step;
  // The recipe's optimizer_states and master_weights (quantized_adamw.hpp); nullopt: today's
  // torch::optim::AdamW.
  std::optional<sim::optim::OptimizerPrecision> optimizer_precision;
};

struct TrainingResult {
  std::string status = "finished";  // finished | diverged | unstable
  std::int64_t steps_planned = 0;
  std::int64_t steps_completed = 0;
  std::optional<std::int64_t> diverged_at_step;
  std::string divergence_reason;
  // The instability rule met (TrainingOptions::instability): the first step of the streak that
  // met it, the step at which it was met (the run stopped there unless it is a baseline) and why.
  std::optional<std::int64_t> unstable_at_step, unstable_met_at_step;
  std::string instability_reason;
  std::vector<std::int64_t> train_steps;              // the logged steps (kMaxTrainRows)
  std::vector<double> train_loss;                     // their training losses
  std::vector<std::pair<std::int64_t, double>> eval;  // (step, eval loss)
  std::vector<double> eval_standard_error;            // of each eval loss (NaN: unmeasured)
  // Per eval: the examples its loss_se is over (the batches where the model gives no example
  // losses): the whole eval set's, or the early sample's (TrainingSchedule::early_eval_stride).
  std::vector<std::int64_t> eval_examples;
  // The last eval's loss per eval example, in eval-set order: an FP8 run and its baseline see the
  // same examples, so their differences give the paired standard error. Empty when the last eval
  // was a sample (a run that stopped before its tail).
  std::vector<double> final_eval_example_losses;
  std::vector<LayerRow> layer_statistics;       // the record's "layers" rows
  std::vector<LayerStatsRow> layer_stats_rows;  // the sidecar's (layer_stats_sidecar.hpp)
  std::vector<ModelSnapshot> snapshots;
  std::vector<std::string> parameter_names;
  // Divergence against the reference at its snapshot steps: (step, weight rel L2, grad rel L2).
  std::vector<std::tuple<std::int64_t, double, double>> divergence;
  double train_seconds = 0.0;  // wall time of the training steps (no eval)
  double median_step_seconds = 0.0;
  double gemm_seconds = 0.0;
  std::int64_t tokens_per_step = 0;
  // With TrainingOptions::optimizer_precision: the states' figures at the record rows' steps.
  std::vector<OptimizerStateRow> optimizer_state_rows;
};

// Trains workload's model for the schedule's steps. A non-finite training loss stops the run with
// status "diverged" at that step (the loss of that step is recorded); a finite loss that meets the
// instability rule gives status "unstable" (stopping likewise unless !stop_when_unstable);
// exceptions propagate.
TrainingResult train(const Workload& workload, const ModelHooks& hooks,
                     const TrainingOptions& options, const BaselineReference* reference);

// The one decision on a step's training loss, for train() and for the runs that fp8lab.sweep's
// Python trainer made (python_run.cpp): a non-finite loss diverges the run; a finite one that
// tripped the instability watch (trips, from watch->observe) makes it unstable. Sets result's
// status and the steps and reason of either; true when the run ends at this step (diverged, or
// unstable and stop_when_unstable).
bool step_ends_run(TrainingResult& result, std::int64_t step, double loss, bool trips,
                   const recipes::InstabilityWatch* watch, bool stop_when_unstable);

// Seconds per training step of each variant's model (fresh, converted by its hooks): the median of
// `steps` steps after one warm-up step, the variants' steps interleaved (step i of each, then
// step i + 1 of each) so that they share the machine's load. The throughput probe run beside each
// run in the same process: FP8 vs baseline Linear vs unconverted FP32 LibTorch Linear.
std::vector<double> time_training_steps(const Workload& workload,
                                        const std::vector<ModelHooks>& variants, std::uint64_t seed,
                                        int steps);

// A training step's forward pass (loss of `batch`), inside the seed API's contextual FP8 autocast:
// FP8 when the model is training (or when autocast_during_eval), forward scales updating on exit.
torch::Tensor forward_loss(TrainableModel& model, const Batch& batch, bool autocast_during_eval);

// The standard error of the mean of `values` (sample standard deviation over sqrt(n)); NaN for
// fewer than 2 values.
double standard_error(const std::vector<double>& values);

// Relative L2 distance ||a - b|| / ||b|| in float64 (0 when both are zero, +Inf when only b is).
double relative_l2(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace fp8lab::experiments
