// The null recipe (issue 20 §2): the baseline with one perturbation that is not FP8, run on the
// baseline's own seed, so that the report measures the chaos floor directly
// (experiments/stats/chaos_floor.hpp): how far any tiny change moves a training run from its
// baseline by the end. Record kind "null", run id "null-<baseline run id>".
//
// The perturbation: every parameter rounded once to bf16 (RNE) right after the model is built,
// then training exactly as the baseline (same Linears, batches, order). Why this one: it touches
// no workload (every workload, present or future, gets it from the runner), it is smaller than
// any FP8 recipe's perturbation (one rounding at 8 bits of mantissa, once, against FP8's 3 bits at
// every step), and it is not FP8. The example, one bf16 rounding of the logits, would need
// a hook in each workload's loss.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "recipes/null_arms.hpp"

namespace fp8lab::experiments {

class TrainableModel;
class OperandNoise;

inline constexpr const char* kNullPerturbation = "initial weights rounded once to bf16";
inline constexpr const char* kNullRunLabel = "null run (bf16-rounded initial weights)";

// The per_step arm (recipes/null_arms.hpp): every Linear becomes a high-precision Linear whose GEMM
// operands get, at every training step, the `sizing` what-if recipe's quantization error of that
// tensor with random signs (experiments/linear/operand_noise.hpp), seeded by the run's seed. Its
// record's "perturbation" says so and names the recipe; "null_noise" holds what the noise measured.
std::string per_step_perturbation(const std::string& sizing);
std::string per_step_label(const std::string& sizing);

// The once arm: "null-" + the baseline's run id (the id since issue 20); per_step:
// "null-per_step-" + the baseline's run id.
std::string null_run_id(const std::string& baseline_run_id,
                        recipes::NullArm arm = recipes::NullArm::once);

// Rounds every parameter of the model to bf16 and back, in place (no autograd).
void round_parameters_to_bf16(TrainableModel& model);

// Gives every backend Linear of the model its own OperandNoise sized by the what-if recipe
// `sizing` (layer index = its position among the model's Linears) and returns them. Throws
// recipes::RecipeError naming `source` for a name lower_what_if refuses.
std::vector<std::shared_ptr<const OperandNoise>> attach_operand_noise(TrainableModel& model,
                                                                      const std::string& sizing,
                                                                      std::uint64_t seed,
                                                                      const std::string& source);

// What the noises added, summed over the run: {"sized_by", "sqnr_db" (over every operand),
// "elements", "operands": {"input/fprop": {"sqnr_db", "elements"}, ...}}.
nlohmann::json operand_noise_summary(const std::vector<std::shared_ptr<const OperandNoise>>& noises,
                                     const std::string& sizing);

}  // namespace fp8lab::experiments
