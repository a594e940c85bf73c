// AdamW with stored moments of a chosen precision and fp32 or bf16 master weights (recipes'
// optimizer_states and master_weights, issue 43 item 3): a torch::optim::AdamW whose step() runs
// sim/optim's adamw_step on each parameter, so that its bits are sim's on every CPU (no ATen
// kernel, no libm or VML call in the step) and on the cuda backend alike (the step runs on the
// CPU: the parameter, its gradient and its moments are copied there and back).
//
// The AdamW state each parameter has in state() holds the stored moments decoded (exp_avg,
// exp_avg_sq, fp32) and the step count, so that what reads an AdamW's state (the probes,
// probe_metrics.hpp) reads the moments the next step will use. A run whose recipe leaves the
// options at fp32 gets torch::optim::AdamW itself (make_adamw): today's bits.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/results/run_record.hpp"
#include "recipes/optimizer_states.hpp"
#include "sim/optim/adamw.hpp"

namespace fp8lab::experiments {

class QuantizedAdamW final : public torch::optim::AdamW {
 public:
  QuantizedAdamW(std::vector<torch::Tensor> params, torch::optim::AdamWOptions options,
                 sim::optim::OptimizerPrecision precision, std::uint64_t seed);
  torch::Tensor step(LossClosure closure = nullptr) override;
  // The storing and rounding errors of the last step, summed over its parameters.
  const sim::optim::StepErrors& last_step_errors() const { return errors_; }
  // The same per parameter, in the order given (count 0: the parameter had no gradient).
  const std::vector<sim::optim::StepErrors>& last_step_errors_by_parameter() const {
    return errors_by_parameter_;
  }
  const sim::optim::OptimizerPrecision& precision() const { return precision_; }
  // Parameter i's stored moments (i in the order of the parameters given).
  const sim::optim::MomentStates& moments(std::size_t i) const { return moments_.at(i); }

 private:
  sim::optim::OptimizerPrecision precision_;
  std::uint64_t seed_;
  std::vector<torch::Tensor> order_;  // the parameters, in the order given (bf16_sr's streams)
  std::unordered_map<const void*, std::size_t> index_;  // TensorImpl -> position in order_
  std::vector<sim::optim::MomentStates> moments_;
  sim::optim::StepErrors errors_;
  std::vector<sim::optim::StepErrors> errors_by_parameter_;
};

// torch::optim::AdamW when precision is nullopt, else QuantizedAdamW.
std::unique_ptr<torch::optim::AdamW> make_adamw(
    std::vector<torch::Tensor> params, torch::optim::AdamWOptions options,
    const std::optional<sim::optim::OptimizerPrecision>& precision, std::uint64_t seed);

// One logged step's figures (TrainingResult::optimizer_state_rows; the record's
// optimizer_states.rows, results/run_record.hpp): the moments' SQNR after storing,
// 10 log10(sum m^2 / sum (stored m - m)^2) over all parameters, and the update's relative error
// from the master weights' rounding, sqrt(sum (stored w - fp32 w)^2 / sum (w before - fp32 w)^2);
// null where the denominator or the numerator is 0.
OptimizerStateRow optimizer_state_row(std::int64_t step, const sim::optim::StepErrors& e);

// The sidecar's rows of one logged step (layer_stats_sidecar.hpp, recipe kOptimizerStatesRecipe):
// per parameter that stepped, one row per stored moment (tensor exp_avg, exp_avg_sq; gemm
// "optimizer", copy "stored"): count, underflowed (non-zero, stored as 0), nan, underflow_pct,
// sqnr_db (10 log10(sum x^2 / sum (stored x - x)^2): +Inf when stored exactly, NaN when the moment
// is 0), mse, amax; the operand-only columns (saturated 0, overflow_pct, the scale range, the
// block range and kurtosis NaN) are not measured. `names[i]` names the i-th parameter given.
std::vector<LayerStatsRow> optimizer_state_sidecar_rows(std::int64_t step,
                                                        const std::vector<std::string>& names,
                                                        const QuantizedAdamW& optimizer);

// The record's optimizer_states (docs/results-schema.md): the recipe's options, and the rows.
nlohmann::json optimizer_states_json(const recipes::OptimizerStates& states,
                                     const std::vector<OptimizerStateRow>& rows);

}  // namespace fp8lab::experiments
