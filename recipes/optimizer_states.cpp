#include "recipes/optimizer_states.hpp"

#include <fmt/format.h>

#include <charconv>

#include "sim/name_table.hpp"

namespace fp8lab::recipes {
namespace {

using sim::optim::Expansion;
using sim::optim::MasterWeights;
using sim::optim::StateFormat;
using sim::optim::StateScaling;

constexpr sim::NameTable<StateFormat, 5> kFormatNames{{{StateFormat::kFp32, "fp32"},
                                                       {StateFormat::kBf16, "bf16"},
                                                       {StateFormat::kFp16, "fp16"},
                                                       {StateFormat::kE4M3, "fp8_e4m3"},
                                                       {StateFormat::kE5M2, "fp8_e5m2"}}};
constexpr sim::NameTable<Expansion, 2> kExpansionNames{
    {{Expansion::kNone, "none"}, {Expansion::kCoat, "coat"}}};
constexpr sim::NameTable<MasterWeights, 3> kMasterNames{
    {{MasterWeights::kFp32, "fp32"},
     {MasterWeights::kBf16, "bf16"},
     {MasterWeights::kBf16Stochastic, "bf16_sr"}}};
constexpr std::int64_t kMaxBlock = 1 << 20;

bool is_fp8(StateFormat f) { return f == StateFormat::kE4M3 || f == StateFormat::kE5M2; }

}  // namespace

bool is_default(const OptimizerStates& s) {
  return s.m == StateFormat::kFp32 && s.v == StateFormat::kFp32 &&
         s.master_weights == MasterWeights::kFp32;
}

bool has_scaled_state(const OptimizerStates& s) {
  return sim::optim::is_scaled(s.m) || sim::optim::is_scaled(s.v);
}

sim::optim::OptimizerPrecision optimizer_precision(const OptimizerStates& s) {
  auto quantization = [&](StateFormat f) {
    sim::optim::StateQuantization q;
    q.format = f;
    q.scaling = s.scaling;
    q.block = s.block;
    q.expansion = is_fp8(f) ? s.expansion : Expansion::kNone;
    return q;
  };
  return {quantization(s.m), quantization(s.v), s.master_weights};
}

std::string_view name(StateFormat v) { return sim::name_in(kFormatNames, v); }
std::string_view name(Expansion v) { return sim::name_in(kExpansionNames, v); }
std::string_view name(MasterWeights v) { return sim::name_in(kMasterNames, v); }

std::string state_scaling_text(const OptimizerStates& s) {
  return s.scaling == StateScaling::kPerTensor ? std::string("per_tensor")
                                               : fmt::format("per_block:{}", s.block);
}

std::optional<StateFormat> parse_state_format(std::string_view t) {
  return sim::value_in(kFormatNames, t);
}
std::optional<Expansion> parse_expansion(std::string_view t) {
  return sim::value_in(kExpansionNames, t);
}
std::optional<MasterWeights> parse_master_weights(std::string_view t) {
  return sim::value_in(kMasterNames, t);
}

bool parse_state_scaling(std::string_view text, OptimizerStates& s) {
  if (text == "per_tensor") {
    s.scaling = StateScaling::kPerTensor;
    return true;
  }
  constexpr std::string_view prefix = "per_block:";
  if (!text.starts_with(prefix)) return false;
  const std::string_view digits = text.substr(prefix.size());
  std::int64_t block = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), block);
  if (error != std::errc{} || end != digits.data() + digits.size() || block < 1 ||
      block > kMaxBlock) {
    return false;
  }
  s.scaling = StateScaling::kPerBlock;
  s.block = block;
  return true;
}

std::string accepted_state_formats() { return sim::joined_names(kFormatNames); }
std::string accepted_state_scalings() {
  return fmt::format("per_tensor, per_block:N (1 <= N <= {}, e.g. per_block:128)", kMaxBlock);
}
std::string accepted_expansions() { return sim::joined_names(kExpansionNames); }
std::string accepted_master_weights() { return sim::joined_names(kMasterNames); }

std::optional<OptimizerStatesProblem> check_optimizer_states(const OptimizerStates& s) {
  if (s.expansion != Expansion::kCoat) return std::nullopt;
  if (!is_fp8(s.m) && !is_fp8(s.v)) {
    return OptimizerStatesProblem{"optimizer_states.expansion",
                                  "expands FP8 states, and neither moment is FP8; value",
                                  "expansion: none, or optimizer_states.m / .v: fp8_e4m3"};
  }
  if (s.m == StateFormat::kE5M2 || s.v == StateFormat::kE5M2) {
    return OptimizerStatesProblem{
        "optimizer_states.expansion",
        "is defined by COAT's kernel for E4M3 states only (its 448 and its __nv_fp8_e4m3), and a "
        "moment is fp8_e5m2; value",
        "expansion: none with fp8_e5m2, or fp8_e4m3 states"};
  }
  if (s.scaling != StateScaling::kPerBlock) {
    return OptimizerStatesProblem{"optimizer_states.expansion",
                                  "is COAT's per-group rule and needs per_block scaling; value",
                                  "optimizer_states.scaling: per_block:128 (COAT's) beside it"};
  }
  return std::nullopt;
}

OptimizerStates canonical_optimizer_states(OptimizerStates s, std::vector<std::string>* reasons) {
  if (has_scaled_state(s)) return s;
  const OptimizerStates unscaled{
      s.m, s.v, StateScaling::kPerTensor, 128, Expansion::kNone, s.master_weights};
  if (!(s == unscaled) && reasons) {
    reasons->push_back(
        "optimizer_states: no moment is fp16 or fp8, so its scaling and expansion are unused");
  }
  return unscaled;
}

std::string optimizer_states_text(const OptimizerStates& s) {
  return fmt::format("m={},v={},scaling={},expansion={},master_weights={}", name(s.m), name(s.v),
                     state_scaling_text(s), name(s.expansion), name(s.master_weights));
}

}  // namespace fp8lab::recipes
