// A precision schedule in a run (recipes/schedule.hpp): the FP8 run converts its model with the
// first stage's recipe, and at the first step of each later stage (before that step's forward
// pass) gives every Fp8Linear the stage's recipe and a fresh scaling state, or, for a
// high_precision stage, runs all three of its GEMMs in the baseline's precision
// (Fp8LinearImpl::set_recipe). The LayerNorm / activation plans follow the stage's recipe
// (high for high_precision). Which stage a step runs depends on the step alone, or, for an
// until_signal stage, on the run's own measurements before it (a function of the trajectory), so
// a run that is started again from step 0 (the sweep's --resume of a run killed part way) gives
// the same bits.
//
// until_signal (recipes/schedule.hpp): while a stage that ends on a signal runs, the Linears
// measure their operands on every step (measure_operands forced on; the measurement reads the
// quantizations and changes no bit of the step), and after each step the run pools its trained
// `layers` rows: underflowed / count over every FP8 Linear, operand and GEMM. The first step
// whose fraction exceeds the threshold ends the stage; the next stage starts at the step after.
// A grad_noise_below stage: on its first step and every `every`-th after it, after the step's
// backward pass (TrainingOptions::after_backward), the baseline's high-precision model recomputes
// the step exactly at the run's weights on its batch (ExactStepRatio, probe_engine.hpp: its own
// model and backend, the global generator restored, the run's gradients and optimizer only read)
// and the whole-model ratio ||g|| / ||g_q - g|| is taken; the first measured step that ends
// `consecutive` measurements in a row below the threshold (1 by default: the first below it) ends
// the stage, and the next starts at the step after.
//
// The record gets "schedule" (the stages, each with its first and last step, recipe, plans per
// GEMM and operand and, for the stages that ran, the GEMMs each Linear ran in FP8) and
// "schedule_switches" (the switches made: step, stage, recipe; run_record.hpp ScheduleSwitch;
// a signal's switch adds "signal": {underflow_fraction, above, measured_at_step} or
// {grad_noise_ratio, below, every, measured_at_step[, consecutive]} (consecutive only when above
// 1; grad_noise_ratio the last of those measurements); a stage that ended, or ran to the end, on a
// grad_noise_below signal has "signal_measurements": [{step, grad_noise_ratio}, ...]).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "experiments/run/probe_engine.hpp"
#include "experiments/run/training.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

class ScheduleRun {
 public:
  // Throws std::invalid_argument when a stage would start at step 0 or at or after the run's
  // last step, or not after the stage before it (a fraction that rounds onto its neighbour).
  ScheduleRun(const recipes::Recipe& recipe, std::int64_t steps_planned);

  // Chains the switches before hooks.before_step (which then sees the new stage) and, for a
  // signal stage, the measurements (above) around measure_operands and take_step_measurements.
  void wrap(ModelHooks& hooks);
  // For a grad_noise_below stage, chains the ratio's measurement (above) after
  // options.after_backward; `models`: where the exact recompute runs (run_probes.hpp
  // probe_models). Nothing for a schedule without one.
  void wrap(TrainingOptions& options, const ProbeModels& models);
  // "schedule" and "schedule_switches" (above).
  void add_to_record(nlohmann::json& record) const;

  // The step each stage starts at (stage 0: 0; -1: a signal stage not reached yet).
  const std::vector<std::int64_t>& starts() const { return starts_; }

 private:
  void switch_to(TrainableModel& model, std::size_t stage, std::int64_t step);
  // The start of the stage after the one now running when it starts on a signal that has not
  // crossed yet (nullptr: none).
  const recipes::ScheduleStart* pending_signal_start() const;
  bool watching_underflow() const;
  bool watching_grad_noise() const;
  void observe_signal(const StepMeasurements& measured, std::int64_t step);
  void observe_grad_noise(const StepAfterBackward& step);

  std::size_t current_ = 0;          // the stage now running
  std::int64_t measured_step_ = -1;  // after_step's step until its measurements are read
  std::int64_t below_in_a_row_ = 0;  // grad_noise_below: the last measurements below it, counted
  nlohmann::json pending_signal_;    // the crossing, for the switch's event
  std::string label_;                // recipes::schedule_label
  std::vector<recipes::StageView> stages_;
  std::vector<std::int64_t> starts_;
  std::int64_t steps_planned_ = 0;
  // Per stage that ran: each Fp8Linear's GEMMs in FP8 from that stage's first step.
  std::vector<nlohmann::json> fp8_gemms_;
  std::shared_ptr<const ExactStepRatio> exact_;  // grad_noise_below's recompute
  // Per stage: the grad_noise_below measurements made while it ran ({step, grad_noise_ratio}).
  std::vector<nlohmann::json> measurements_;
  nlohmann::json switches_ = nlohmann::json::array();
};

// The plans of a stage's recipe (nullptr: high precision), per GEMM and operand, in
// recipes::plan_text's words (as explain and the lowering golden tables write a plan):
// {"fprop": {"input": "nvfp4 e2m1 1x16 ...", "weight": ...}, ...}.
nlohmann::json stage_plans(const recipes::Recipe* recipe);

}  // namespace fp8lab::experiments
