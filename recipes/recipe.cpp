#include "recipes/recipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "recipes/role_rules.hpp"

namespace fp8lab::recipes {
namespace {

using sim::joined_names;
using sim::name_in;
using sim::NameTable;
using sim::value_in;
// The FP8 format, amax algorithm, MX mode, torchao version, NVFP4 mode and elementwise precision
// are spelled in files as sim names them (sim/settings.hpp's tables: sim::scaling::k...Names);
// the scalings and the GEMM models are recipe words of their own.
namespace words = sim::scaling;

constexpr NameTable<Scaling, 12> kScalingNames{{{Scaling::delayed, "delayed"},
                                                {Scaling::current, "current"},
                                                {Scaling::tensorwise, "tensorwise"},
                                                {Scaling::rowwise, "rowwise"},
                                                {Scaling::rowwise_with_gw_hp, "rowwise_with_gw_hp"},
                                                {Scaling::block, "block"},
                                                {Scaling::mxfp8, "mxfp8"},
                                                {Scaling::mxfp4, "mxfp4"},
                                                {Scaling::mxfp6_e2m3, "mxfp6_e2m3"},
                                                {Scaling::mxfp6_e3m2, "mxfp6_e3m2"},
                                                {Scaling::nvfp4, "nvfp4"},
                                                {Scaling::static_, "static"}}};
constexpr NameTable<BackwardOverride, 3> kBackwardOverrideNames{
    {{BackwardOverride::kNone, "none"},
     {BackwardOverride::kHighPrecision, "high_precision"},
     {BackwardOverride::kDequantized, "dequantized"}}};
constexpr NameTable<Accumulation, 5> kAccumulationWords{
    {{Accumulation::kFp32Seq, "fp32_seq"},
     {Accumulation::kHopperSplitAccumulator, "hopper_split"},
     {Accumulation::kHopperFastAccum, "hopper_fast"},
     {Accumulation::kExact, "exact"},
     {Accumulation::kBlackwellBlock, "blackwell_block"}}};

std::string_view bool_name(bool b) { return b ? "true" : "false"; }

std::string override_text(const OverrideLinearPrecision& o) {
  return fmt::format("[{}, {}, {}]", bool_name(o.fprop), bool_name(o.dgrad), bool_name(o.wgrad));
}

std::string gemm_text(const GemmAccumulation& g) {
  return fmt::format("{{fprop: {}, dgrad: {}, wgrad: {}}}", name(g.fprop), name(g.dgrad),
                     name(g.wgrad));
}

std::string filter_text(const ModuleFilter& f) {
  std::string names;
  for (const auto& n : f.skip_names) names += (names.empty() ? "" : ", ") + n;
  return fmt::format(
      "{{skip_names: [{}], skip_first_last_linear: {}, require_dims_divisible_by_16: {}, "
      "skip_later_siblings_after_indivisible: {}}}",
      names, bool_name(f.skip_first_last_linear), bool_name(f.require_dims_divisible_by_16),
      bool_name(f.skip_later_siblings_after_indivisible));
}

std::string list_text(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& n : items) out += (out.empty() ? "" : ", ") + n;
  return "[" + out + "]";
}

std::string keep_text(const KeepHighPrecision& k) {
  return fmt::format("{{layers: {}, fprop: {}, dgrad: {}, wgrad: {}}}", list_text(k.layers),
                     list_text(k.fprop), list_text(k.dgrad), list_text(k.wgrad));
}

std::string autoswitch_text(const Autoswitch& a) {
  return fmt::format("{{underflow_percent: {}, mse: {}}}", a.underflow_percent, a.mse);
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}
bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::binary_search(v.begin(), v.end(), x);
}

}  // namespace

std::string_view name(Scaling v) { return name_in(kScalingNames, v); }
std::string_view name(Fp8Format v) { return name_in(words::kFp8FormatNames, v); }
std::string_view name(AmaxComputeAlgo v) { return name_in(words::kAmaxComputeAlgoNames, v); }
std::string_view name(E8M0Mode v) { return name_in(words::kE8M0ModeNames, v); }
std::string_view name(TorchaoVersion v) { return name_in(words::kTorchaoVersionNames, v); }
std::string_view name(Accumulation v) { return name_in(kAccumulationWords, v); }
std::string_view name(ElementwisePrecision v) {
  return name_in(words::kElementwisePrecisionNames, v);
}
std::optional<Scaling> parse_scaling(std::string_view t) { return value_in(kScalingNames, t); }
std::optional<Fp8Format> parse_fp8_format(std::string_view t) {
  return value_in(words::kFp8FormatNames, t);
}
std::optional<AmaxComputeAlgo> parse_amax_compute_algo(std::string_view t) {
  return value_in(words::kAmaxComputeAlgoNames, t);
}
std::optional<E8M0Mode> parse_mx_scale_mode(std::string_view t) {
  return value_in(words::kE8M0ModeNames, t);
}
std::optional<TorchaoVersion> parse_torchao_version(std::string_view t) {
  return value_in(words::kTorchaoVersionNames, t);
}
std::optional<Accumulation> parse_accumulation(std::string_view t) {
  return value_in(kAccumulationWords, t);
}
std::string accepted_scalings() { return joined_names(kScalingNames); }
std::string accepted_fp8_formats() { return joined_names(words::kFp8FormatNames); }
std::string accepted_amax_compute_algos() { return joined_names(words::kAmaxComputeAlgoNames); }
std::string accepted_mx_scale_modes() { return joined_names(words::kE8M0ModeNames); }
std::string accepted_torchao_versions() { return joined_names(words::kTorchaoVersionNames); }
std::string accepted_accumulations() { return joined_names(kAccumulationWords); }
std::string accepted_elementwise_precisions() {
  return joined_names(words::kElementwisePrecisionNames);
}
std::string accepted_nvfp4_modes() { return joined_names(words::kNvfp4ModeNames); }
std::string_view name(Nvfp4Mode m) { return name_in(words::kNvfp4ModeNames, m); }
std::optional<Nvfp4Mode> parse_nvfp4_mode(std::string_view t) {
  return value_in(words::kNvfp4ModeNames, t);
}
std::string accepted_backward_overrides() { return joined_names(kBackwardOverrideNames); }
std::string_view name(BackwardOverride v) { return name_in(kBackwardOverrideNames, v); }
std::optional<BackwardOverride> parse_backward_override(std::string_view t) {
  return value_in(kBackwardOverrideNames, t);
}
std::optional<ElementwisePrecision> parse_elementwise_precision(std::string_view t) {
  return value_in(words::kElementwisePrecisionNames, t);
}

bool is_torchao_scaling(Scaling s) {
  return s == Scaling::tensorwise || s == Scaling::rowwise || s == Scaling::rowwise_with_gw_hp;
}
bool uses_amax_history(Scaling s) { return s == Scaling::delayed; }
bool is_mx(Scaling s) {
  return s == Scaling::mxfp8 || s == Scaling::mxfp4 || s == Scaling::mxfp6_e2m3 ||
         s == Scaling::mxfp6_e3m2;
}
std::optional<sim::Format> subbyte_element_format(Scaling s) {
  switch (s) {
    case Scaling::mxfp4:
    case Scaling::nvfp4: return sim::Format::E2M1;
    case Scaling::mxfp6_e2m3: return sim::Format::E2M3;
    case Scaling::mxfp6_e3m2: return sim::Format::E3M2;
    default: return std::nullopt;
  }
}
bool has_power_2_option(Scaling s) {
  return s != Scaling::delayed && !is_mx(s) && s != Scaling::nvfp4 && s != Scaling::static_;
}
bool uses_torchao_version(Scaling s, E8M0Mode m) { return is_mx(s) && m != E8M0Mode::kTe; }
bool uses_torchao_version(const Recipe& r) {
  return uses_torchao_version(r.scaling, r.mx_scale_mode);
}

bool gemm_model_takes_subbyte(Accumulation a) {
  return a == Accumulation::kFp32Seq || a == Accumulation::kExact ||
         a == Accumulation::kBlackwellBlock;
}

GemmAccumulation default_gemm_accumulation(Scaling s) {
  if (subbyte_element_format(s)) {
    return {Accumulation::kBlackwellBlock, Accumulation::kBlackwellBlock,
            Accumulation::kBlackwellBlock};
  }
  if (s == Scaling::block) {
    return {Accumulation::kHopperSplitAccumulator, Accumulation::kHopperSplitAccumulator,
            Accumulation::kHopperSplitAccumulator};
  }
  return {Accumulation::kHopperFastAccum, Accumulation::kHopperSplitAccumulator,
          Accumulation::kHopperSplitAccumulator};
}

Fp8Format default_fp8_format(Scaling s) {
  switch (s) {
    case Scaling::rowwise:
    case Scaling::rowwise_with_gw_hp:
    case Scaling::block: return Fp8Format::kE4M3;
    default: return Fp8Format::kHybrid;
  }
}

bool default_power_2_scales(Scaling s) {
  return s == Scaling::rowwise || s == Scaling::rowwise_with_gw_hp || s == Scaling::block;
}

ModuleFilter default_module_filter(Scaling s) {
  ModuleFilter f;  // TE: dims % 16, and convert_model's bare return (te-accelerate.md §1.4)
  if (is_torchao_scaling(s)) {
    // §1.6: via Accelerator, the first and last Linear are skipped, and indivisible Linears are
    // filtered one by one (no early return).
    f.skip_first_last_linear = true;
    f.skip_later_siblings_after_indivisible = false;
  }
  return f;
}

KeepHighPrecision canonical_keep_high_precision(KeepHighPrecision k) {
  for (auto* list : {&k.layers, &k.fprop, &k.dgrad, &k.wgrad}) sort_unique(*list);
  // A pattern in all three per-GEMM lists keeps the whole layer: it says the same as `layers`.
  for (const auto& p : k.fprop) {
    if (contains(k.dgrad, p) && contains(k.wgrad, p)) k.layers.push_back(p);
  }
  sort_unique(k.layers);
  for (auto* list : {&k.fprop, &k.dgrad, &k.wgrad}) {
    std::erase_if(*list, [&](const std::string& p) { return contains(k.layers, p); });
  }
  return k;
}

std::string canonical_string(const Recipe& r) {
  const std::string torchao_version =
      uses_torchao_version(r) ? fmt::format(";torchao_version={}", name(r.torchao_version))
      : r.scaling == Scaling::nvfp4
          ? fmt::format(";nvfp4_mode={};nvfp4_2d={}{}{}", name(r.nvfp4_mode), bool_name(r.nvfp4_2d),
                        r.nvfp4_rht ? ";nvfp4_rht=true" : "",
                        r.nvfp4_stochastic_rounding ? ";nvfp4_stochastic_rounding=true" : "")
      : r.scaling == Scaling::static_ ? fmt::format(";static_scale={}", r.static_scale)
                                      : "";
  const std::string mx_tseng =
      fmt::format("{}{}{}{}", r.mx_stochastic_rounding ? ";mx_stochastic_rounding=true" : "",
                  r.mx_rht ? ";mx_rht=true" : "", r.mx_2d ? ";mx_2d=true" : "",
                  r.backward_override == BackwardOverride::kNone
                      ? std::string()
                      : fmt::format(";backward_override={}", name(r.backward_override)));
  std::string beyond_gemms;
  if (r.norm_affine_precision != ElementwisePrecision::kHigh) {
    beyond_gemms += fmt::format(";norm_affine_precision={}", name(r.norm_affine_precision));
  }
  if (r.activation_precision != ElementwisePrecision::kHigh) {
    beyond_gemms += fmt::format(";activation_precision={}", name(r.activation_precision));
  }
  return fmt::format(
      "scaling={};fp8_format={};margin={};interval={};amax_history_len={};amax_compute_algo={};"
      "override_linear_precision={};use_autocast_during_eval={};gemm={};power_2_scales={};"
      "mx_scale_mode={}{}{};pad_inner_dim={};enable_fsdp_float8_all_gather={};"
      "module_filter={}{}{}{}{}{}{}",
      name(r.scaling), name(r.fp8_format), r.margin, r.interval, r.amax_history_len,
      name(r.amax_compute_algo), override_text(r.override_linear_precision),
      bool_name(r.use_autocast_during_eval), gemm_text(r.gemm), bool_name(r.power_2_scales),
      name(r.mx_scale_mode), torchao_version, mx_tseng, bool_name(r.pad_inner_dim),
      bool_name(r.enable_fsdp_float8_all_gather), filter_text(r.module_filter), beyond_gemms,
      r.keep_high_precision.empty()
          ? std::string()
          : fmt::format(";keep_high_precision={}", keep_text(r.keep_high_precision)),
      r.autoswitch.enabled ? fmt::format(";autoswitch={}", autoswitch_text(r.autoswitch))
                           : std::string(),
      r.per_role.empty() ? std::string() : ";per_role=" + per_role_text(r.per_role),
      r.schedule.empty() ? std::string() : ";schedule=" + schedule_text(r),
      is_default(r.optimizer_states)
          ? std::string()
          : fmt::format(";optimizer_states={}", optimizer_states_text(r.optimizer_states)));
}

std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis, then per byte xor, * prime
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

std::string run_id(const Recipe& r) { return fnv1a_hex(canonical_string(r)); }

std::string describe(const Recipe& r) {
  std::string out =
      fmt::format("scaling: {}\nfp8_format: {}\n", name(r.scaling), name(r.fp8_format));
  if (uses_amax_history(r.scaling)) {
    out += fmt::format("margin: {}\ninterval: {}\namax_history_len: {}\namax_compute_algo: {}\n",
                       r.margin, r.interval, r.amax_history_len, name(r.amax_compute_algo));
  }
  if (const auto element = subbyte_element_format(r.scaling)) {
    out += fmt::format("element format: {} (every operand; fp8_format is not used)\n",
                       sim::spec(*element).name);
  }
  if (is_mx(r.scaling)) out += fmt::format("mx_scale_mode: {}\n", name(r.mx_scale_mode));
  if (r.mx_2d) {  // printed only when on, as canonical_string writes it
    out += "mx_2d: true (the weight in 32 x 32 tiles, one E8M0 each, in fprop and dgrad)\n";
  }
  if (r.scaling == Scaling::nvfp4) {
    out += fmt::format("nvfp4_mode: {} ({})\nnvfp4_2d: {}\n", name(r.nvfp4_mode),
                       r.nvfp4_mode == Nvfp4Mode::kTe        ? "TE's kernels"
                       : r.nvfp4_mode == Nvfp4Mode::kTorchao ? "torchao 0.18's nvfp4_quantize"
                                                             : "torchao 0.18's NVFP4TrainingConfig "
                                                               "kernels, bf16 operands",
                       bool_name(r.nvfp4_2d));
    out += fmt::format("nvfp4_rht: {}\nnvfp4_stochastic_rounding: {}\n", bool_name(r.nvfp4_rht),
                       bool_name(r.nvfp4_stochastic_rounding));
  }
  if (r.scaling == Scaling::static_) {
    out += fmt::format(
        "static_scale: {} (every operand: q = cast_satfinite(RN(x * {})), no amax measured)\n",
        r.static_scale, r.static_scale);
  }
  if (r.scaling == Scaling::mxfp4) {
    out += fmt::format(
        "mx_stochastic_rounding: {}{}\nmx_rht: {}{}\n", bool_name(r.mx_stochastic_rounding),
        r.mx_stochastic_rounding ? " (dgrad and wgrad operands: Tseng et al.'s dither_scale)" : "",
        bool_name(r.mx_rht),
        r.mx_rht ? " (dgrad and wgrad operands: 64-point Hadamard along K, fresh signs per call)"
                 : "");
  }
  if (uses_torchao_version(r)) {
    out += fmt::format("torchao_version: {} ({}'s to_mx)\n", name(r.torchao_version),
                       r.torchao_version == TorchaoVersion::kV0_18 ? "torchao v0.18.0"
                                                                   : "torchao main after PR #4725");
  }
  if (has_power_2_option(r.scaling)) {
    out += fmt::format("power_2_scales: {}\n", bool_name(r.power_2_scales));
  }
  out += fmt::format("override_linear_precision: {}\n", override_text(r.override_linear_precision));
  if (r.backward_override != BackwardOverride::kNone) {
    out += fmt::format(
        "backward_override: {} ({})\n", name(r.backward_override),
        r.backward_override == BackwardOverride::kHighPrecision
            ? "dgrad and wgrad in high precision on the unquantized input and weight"
            : "dgrad and wgrad in high precision on the forward's input and weight codes, "
              "dequantized; grad_output unquantized");
  }
  out += fmt::format("use_autocast_during_eval: {}\ngemm: {}\n",
                     bool_name(r.use_autocast_during_eval), gemm_text(r.gemm));
  if (is_torchao_scaling(r.scaling)) {
    out += fmt::format("pad_inner_dim: {}\nenable_fsdp_float8_all_gather: {}\n",
                       bool_name(r.pad_inner_dim), bool_name(r.enable_fsdp_float8_all_gather));
  }
  out += fmt::format("module_filter: {}\n", filter_text(r.module_filter));
  if (r.norm_affine_precision != ElementwisePrecision::kHigh) {
    out += fmt::format("norm_affine_precision: {}\n", name(r.norm_affine_precision));
  }
  if (r.activation_precision != ElementwisePrecision::kHigh) {
    out += fmt::format("activation_precision: {}\n", name(r.activation_precision));
  }
  if (!r.keep_high_precision.empty()) {
    out += fmt::format("keep_high_precision: {} (regular expressions over whole Linear names)\n",
                       keep_text(r.keep_high_precision));
  }
  if (r.autoswitch.enabled) {
    out += fmt::format("autoswitch: {} (a GEMM above either moves to high precision)\n",
                       autoswitch_text(r.autoswitch));
  }
  out += describe_per_role(r);
  if (!r.schedule.empty()) out += describe_schedule(r);
  if (!is_default(r.optimizer_states)) {
    out += fmt::format("optimizer_states: {} (AdamW's stored moments and master weights)\n",
                       optimizer_states_text(r.optimizer_states));
  }
  return out;
}

}  // namespace fp8lab::recipes
