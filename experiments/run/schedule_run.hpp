// A precision schedule in a run (recipes/schedule.hpp): the FP8 run converts its model with the
// first stage's recipe, and at the first step of each later stage (before that step's forward
// pass) gives every Fp8Linear the stage's recipe and a fresh scaling state, or, for a
// high_precision stage, runs all three of its GEMMs in the baseline's precision
// (Fp8LinearImpl::set_recipe). The LayerNorm / activation plans follow the stage's recipe
// (high for high_precision). Which stage a step runs depends on the step alone, so a run that is
// started again from step 0 (the sweep's --resume of a run killed part way) gives the same bits.
//
// The record gets "schedule" (the stages, each with its first and last step, recipe, plans per
// GEMM and operand and, for the stages that ran, the GEMMs each Linear ran in FP8) and
// "schedule_switches" (the switches made: step, stage, recipe; run_record.hpp ScheduleSwitch).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "experiments/run/training.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

class ScheduleRun {
 public:
  // Throws std::invalid_argument when a stage would start at step 0 or at or after the run's
  // last step, or not after the stage before it (a fraction that rounds onto its neighbour).
  ScheduleRun(const recipes::Recipe& recipe, std::int64_t steps_planned);

  // Chains the switches before hooks.before_step (which then sees the new stage).
  void wrap(ModelHooks& hooks);
  // "schedule" and "schedule_switches" (above).
  void add_to_record(nlohmann::json& record) const;

  // The step each stage starts at (stage 0: 0).
  const std::vector<std::int64_t>& starts() const { return starts_; }

 private:
  void switch_to(TrainableModel& model, std::size_t stage, std::int64_t step);

  std::string label_;  // recipes::schedule_label
  std::vector<recipes::StageView> stages_;
  std::vector<std::int64_t> starts_;
  std::int64_t steps_planned_ = 0;
  // Per stage that ran: each Fp8Linear's GEMMs in FP8 from that stage's first step.
  std::vector<nlohmann::json> fp8_gemms_;
  nlohmann::json switches_ = nlohmann::json::array();
};

// The plans of a stage's recipe (nullptr: high precision), per GEMM and operand, as text:
// {"fprop": {"input": "nvfp4 E2M1 1x16 ...", "weight": ...}, ...}.
nlohmann::json stage_plans(const recipes::Recipe* recipe);

}  // namespace fp8lab::experiments
