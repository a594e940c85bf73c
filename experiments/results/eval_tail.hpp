// Which of a run's eval points the report's verdicts read (docs/results-schema.md, "Paired
// verdicts"), written once: the report computes its statistics over them and training evaluates
// them on the whole eval set, the other points on a sample (TrainingSchedule::early_eval_stride).
// No LibTorch.
//
//   tail     the last 10% of eval points (at least one): the paired verdict's statistic, the
//            contrasts' tail loss, the null runs' chaos floor; its last point is /final (the
//            verdict "tracks baseline", the noise floor, eval_example_losses).
//   initial  the first eval point (step 0): /final/initial_eval_loss, which the rule "failed to
//            train" and the lr-sensitivity's capped loss read.
#pragma once

#include <cstddef>

namespace fp8lab::experiments {

inline constexpr double kTailFraction = 0.10;

// How many of `eval_points` form the tail: ceil(10%), at least 1 (0 for none).
std::size_t tail_points(std::size_t eval_points);

// Whether the eval point `index` (0-based, in step order) of a run of `eval_points` points is one
// that a verdict reads: the initial point or one of the tail.
bool eval_enters_verdicts(std::size_t index, std::size_t eval_points);

}  // namespace fp8lab::experiments
