// The null recipe (issue 20 §2): the baseline with one perturbation that is not FP8, run on the
// baseline's own seed, so that the report measures the chaos floor directly
// (experiments/report/chaos_floor.hpp): how far any tiny change moves a training run from its
// baseline by the end. Record kind "null", run id "null-<baseline run id>".
//
// The perturbation: every parameter rounded once to bf16 (RNE) right after the model is built,
// then training exactly as the baseline (same Linears, batches, order). Why this one: it touches
// no workload (every workload, present or future, gets it from the runner), it is smaller than
// any FP8 recipe's perturbation (one rounding at 8 bits of mantissa, once, against FP8's 3 bits at
// every step), and it is not FP8. The example, one bf16 rounding of the logits, would need
// a hook in each workload's loss.
#pragma once

#include <string>

namespace fp8lab::experiments {

class TrainableModel;

inline constexpr const char* kNullPerturbation = "initial weights rounded once to bf16";
inline constexpr const char* kNullRunLabel = "null run (bf16-rounded initial weights)";

// "null-" + the baseline's run id.
std::string null_run_id(const std::string& baseline_run_id);

// Rounds every parameter of the model to bf16 and back, in place (no autograd).
void round_parameters_to_bf16(TrainableModel& model);

}  // namespace fp8lab::experiments
