// A recipe's optimizer-state and master-weight precision (issue 43 item 3): how AdamW stores its
// moments between steps and in what precision the weights are kept, as sim/optim/ defines them.
//
// Keys (recipe files nest the first four under `optimizer_states:`; sweeps write them dotted):
//   optimizer_states.m, optimizer_states.v  fp32 (default), bf16, fp16, fp8_e4m3, fp8_e5m2
//   optimizer_states.scaling                per_tensor (default; FP8-LM's power-of-two scale) or
//                                           per_block:N (COAT's groups of N), for fp16 and fp8
//   optimizer_states.expansion              none (default) or coat (COAT's dynamic range
//                                           expansion: per_block, fp8 states fp8_e4m3)
//   master_weights                          fp32 (default), bf16 (round to nearest even), bf16_sr
//                                           (stochastic rounding of each update)
// All defaults: today's AdamW (torch::optim::AdamW), and the recipe's canonical string and run id
// are unchanged. FP8-LM's choice: {m: fp8_e4m3, v: fp16}; COAT's: {m: fp8_e4m3, v: fp8_e4m3,
// scaling: per_block:128, expansion: coat}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/optim/adamw.hpp"

namespace fp8lab::recipes {

struct OptimizerStates {
  sim::optim::StateFormat m = sim::optim::StateFormat::kFp32;
  sim::optim::StateFormat v = sim::optim::StateFormat::kFp32;
  sim::optim::StateScaling scaling = sim::optim::StateScaling::kPerTensor;
  std::int64_t block = 128;  // per_block only
  sim::optim::Expansion expansion = sim::optim::Expansion::kNone;
  sim::optim::MasterWeights master_weights = sim::optim::MasterWeights::kFp32;
  friend bool operator==(const OptimizerStates&, const OptimizerStates&) = default;
};

// Today's AdamW: fp32 moments and fp32 weights (the other fields then mean nothing).
bool is_default(const OptimizerStates& s);
// Whether either moment takes a scale (fp16, fp8): only then do scaling and expansion apply.
bool has_scaled_state(const OptimizerStates& s);
sim::optim::OptimizerPrecision optimizer_precision(const OptimizerStates& s);

std::string_view name(sim::optim::StateFormat);
std::string_view name(sim::optim::Expansion);
std::string_view name(sim::optim::MasterWeights);
std::string state_scaling_text(const OptimizerStates& s);  // per_tensor, per_block:128
std::optional<sim::optim::StateFormat> parse_state_format(std::string_view);
std::optional<sim::optim::Expansion> parse_expansion(std::string_view);
std::optional<sim::optim::MasterWeights> parse_master_weights(std::string_view);
// per_tensor or per_block:N with 1 <= N <= 2^20, into s; false otherwise.
bool parse_state_scaling(std::string_view text, OptimizerStates& s);
std::string accepted_state_formats();
std::string accepted_state_scalings();
std::string accepted_expansions();
std::string accepted_master_weights();

// A combination that no paper defines: the key to blame, the problem and what is accepted.
struct OptimizerStatesProblem {
  std::string key, problem, accepted;
};
std::optional<OptimizerStatesProblem> check_optimizer_states(const OptimizerStates& s);

// The same storage spelt one way: scaling and expansion reset when no state is scaled (they
// apply to nothing). A reason for each change goes to `reasons` when given.
OptimizerStates canonical_optimizer_states(OptimizerStates s, std::vector<std::string>* reasons);

// "m=fp8_e4m3,v=fp16,scaling=per_tensor,expansion=none,master_weights=fp32" (canonical strings,
// explain, labels).
std::string optimizer_states_text(const OptimizerStates& s);

}  // namespace fp8lab::recipes
