#include "recipes/fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <regex>

#include "recipes/detail/field_parse.hpp"
#include "recipes/detail/text_case.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/limits.hpp"
#include "recipes/role_rules.hpp"

namespace fp8lab::recipes {
namespace {

using detail::lower;
using detail::upper;

// A recipe under construction: fields whose default depends on the scaling stay empty until
// resolve() knows the scaling.
struct Draft {
  Recipe fixed;  // the fields with fixed defaults
  std::optional<Scaling> scaling;
  std::optional<bool> use_mxfp8;
  std::optional<Fp8Format> fp8_format;
  std::optional<bool> power_2_scales;
  std::optional<Accumulation> fprop, dgrad, wgrad;
  std::optional<std::vector<std::string>> skip_names;
  std::optional<bool> skip_first_last, dims_16, later_siblings;
  std::map<std::string, const FieldSetting*, std::less<>> given;  // last setting of each key
};

// regexes: a list of ECMAScript regular expressions, each compiled when read.
// number: a finite decimal number; `normalize` checks its range and spells it canonically.
enum class Kind { boolean, integer, word, triple, names, regexes, number, rules };

struct FieldSpec {
  std::string_view key;
  Kind kind;
  std::string accepted;
  std::int64_t min_int;                                                   // integers only
  std::function<std::optional<std::string>(std::string_view)> normalize;  // words only
  std::function<void(Draft&, const FieldValue&)> apply;
  std::function<std::string(const Recipe&)> get;
};

std::string bool_text(bool b) { return b ? "true" : "false"; }
std::string override_text(const OverrideLinearPrecision& o) {
  return fmt::format("[{}, {}, {}]", bool_text(o.fprop), bool_text(o.dgrad), bool_text(o.wgrad));
}
std::string names_text(const std::vector<std::string>& names) {
  std::string out = "[";
  for (const auto& n : names) out += (out.size() > 1 ? ", " : "") + n;
  return out + "]";
}

template <class Enum>
std::function<std::optional<std::string>(std::string_view)> enum_normalizer(
    std::optional<Enum> (*parse)(std::string_view), std::string (*fold)(std::string_view)) {
  return [parse, fold](std::string_view text) -> std::optional<std::string> {
    const std::string folded = fold ? fold(text) : std::string(text);
    if (const auto value = parse(folded)) return std::string(name(*value));
    return std::nullopt;
  };
}
std::string keep(std::string_view t) { return std::string(t); }

// A whole decimal number (strtod's syntax), finite; nullopt otherwise.
std::optional<double> parse_number(std::string_view text) {
  const std::string s(text);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool as_b(const FieldValue& v) { return std::get<bool>(v); }
std::int64_t as_i(const FieldValue& v) { return std::get<std::int64_t>(v); }
const std::string& as_w(const FieldValue& v) { return std::get<std::string>(v); }

// optimizer_states.{m, v, scaling, expansion} and master_weights (optimizer_states.hpp).
void add_optimizer_state_fields(std::vector<FieldSpec>& t) {
  auto state = [&](std::string_view key, sim::optim::StateFormat OptimizerStates::*member) {
    t.push_back(
        {key, Kind::word, accepted_state_formats(), 0, enum_normalizer(&parse_state_format, &lower),
         [member](Draft& d, const FieldValue& v) {
           d.fixed.optimizer_states.*member = *parse_state_format(as_w(v));
         },
         [member](const Recipe& r) { return std::string(name(r.optimizer_states.*member)); }});
  };
  state("optimizer_states.m", &OptimizerStates::m);
  state("optimizer_states.v", &OptimizerStates::v);
  t.push_back({"optimizer_states.scaling", Kind::word, accepted_state_scalings(), 0,
               [](std::string_view text) -> std::optional<std::string> {
                 OptimizerStates s;
                 if (!parse_state_scaling(lower(text), s)) return std::nullopt;
                 return state_scaling_text(s);
               },
               [](Draft& d, const FieldValue& v) {
                 parse_state_scaling(as_w(v), d.fixed.optimizer_states);
               },
               [](const Recipe& r) { return state_scaling_text(r.optimizer_states); }});
  t.push_back({"optimizer_states.expansion", Kind::word, accepted_expansions(), 0,
               enum_normalizer(&parse_expansion, &lower),
               [](Draft& d, const FieldValue& v) {
                 d.fixed.optimizer_states.expansion = *parse_expansion(as_w(v));
               },
               [](const Recipe& r) { return std::string(name(r.optimizer_states.expansion)); }});
  t.push_back(
      {"master_weights", Kind::word, accepted_master_weights(), 0,
       enum_normalizer(&parse_master_weights, &lower),
       [](Draft& d, const FieldValue& v) {
         d.fixed.optimizer_states.master_weights = *parse_master_weights(as_w(v));
       },
       [](const Recipe& r) { return std::string(name(r.optimizer_states.master_weights)); }});
}

const std::vector<FieldSpec>& specs() {
  static const std::vector<FieldSpec> table = [] {
    std::vector<FieldSpec> t;
    // Fields with a fixed default: the draft's Recipe member is the recipe's own.
    auto fixed_flag = [&](std::string_view key, bool Recipe::*member) {
      t.push_back({key,
                   Kind::boolean,
                   "true, false",
                   0,
                   {},
                   [member](Draft& d, const FieldValue& v) { d.fixed.*member = as_b(v); },
                   [member](const Recipe& r) { return bool_text(r.*member); }});
    };
    auto fixed_integer = [&](std::string_view key, std::string accepted, std::int64_t min_int,
                             std::int64_t Recipe::*member) {
      t.push_back({key,
                   Kind::integer,
                   std::move(accepted),
                   min_int,
                   {},
                   [member](Draft& d, const FieldValue& v) { d.fixed.*member = as_i(v); },
                   [member](const Recipe& r) { return std::to_string(r.*member); }});
    };
    // An enum field, its words folded to lower case as accelerate does.
    auto fixed_word = [&]<class Enum>(std::string_view key, std::string accepted,
                                      std::optional<Enum> (*parse)(std::string_view),
                                      Enum Recipe::*member) {
      t.push_back(
          {key, Kind::word, std::move(accepted), 0, enum_normalizer(parse, &lower),
           [member, parse](Draft& d, const FieldValue& v) { d.fixed.*member = *parse(as_w(v)); },
           [member](const Recipe& r) { return std::string(name(r.*member)); }});
    };
    t.push_back({"scaling", Kind::word, accepted_scalings(), 0,
                 enum_normalizer(&parse_scaling, &keep),
                 [](Draft& d, const FieldValue& v) { d.scaling = parse_scaling(as_w(v)); },
                 [](const Recipe& r) { return std::string(name(r.scaling)); }});
    t.push_back({"use_mxfp8_block_scaling",
                 Kind::boolean,
                 "true, false",
                 0,
                 {},
                 [](Draft& d, const FieldValue& v) { d.use_mxfp8 = as_b(v); },
                 [](const Recipe& r) { return bool_text(r.scaling == Scaling::mxfp8); }});
    // accelerate uppercases fp8_format and lowercases amax_compute_algo (te-accelerate.md §1.1).
    t.push_back({"fp8_format", Kind::word, accepted_fp8_formats(), 0,
                 enum_normalizer(&parse_fp8_format, &upper),
                 [](Draft& d, const FieldValue& v) { d.fp8_format = parse_fp8_format(as_w(v)); },
                 [](const Recipe& r) { return std::string(name(r.fp8_format)); }});
    fixed_integer("margin", margin_limit().accepted(), 0, &Recipe::margin);
    fixed_integer("interval", interval_limit().accepted(), 1, &Recipe::interval);
    fixed_integer("amax_history_len", amax_history_len_limit().accepted(), 1,
                  &Recipe::amax_history_len);
    fixed_word("amax_compute_algo", accepted_amax_compute_algos(), &parse_amax_compute_algo,
               &Recipe::amax_compute_algo);
    t.push_back({"override_linear_precision",
                 Kind::triple,
                 "three booleans [fprop, dgrad, wgrad], e.g. [false, false, true]",
                 0,
                 {},
                 [](Draft& d, const FieldValue& v) {
                   d.fixed.override_linear_precision = std::get<OverrideLinearPrecision>(v);
                 },
                 [](const Recipe& r) { return override_text(r.override_linear_precision); }});
    fixed_word("backward_override", accepted_backward_overrides(), &parse_backward_override,
               &Recipe::backward_override);
    fixed_flag("use_autocast_during_eval", &Recipe::use_autocast_during_eval);
    t.push_back({"power_2_scales",
                 Kind::boolean,
                 "true, false",
                 0,
                 {},
                 [](Draft& d, const FieldValue& v) { d.power_2_scales = as_b(v); },
                 [](const Recipe& r) { return bool_text(r.power_2_scales); }});
    fixed_word("mx_scale_mode", accepted_mx_scale_modes(), &parse_mx_scale_mode,
               &Recipe::mx_scale_mode);
    fixed_word("nvfp4_mode", accepted_nvfp4_modes(), &parse_nvfp4_mode, &Recipe::nvfp4_mode);
    fixed_flag("nvfp4_2d", &Recipe::nvfp4_2d);
    fixed_flag("nvfp4_rht", &Recipe::nvfp4_rht);
    fixed_flag("nvfp4_stochastic_rounding", &Recipe::nvfp4_stochastic_rounding);
    fixed_flag("mx_stochastic_rounding", &Recipe::mx_stochastic_rounding);
    fixed_flag("mx_rht", &Recipe::mx_rht);
    fixed_flag("mx_2d", &Recipe::mx_2d);
    fixed_word("torchao_version", accepted_torchao_versions(), &parse_torchao_version,
               &Recipe::torchao_version);
    // static only: a positive, finite fp32 value (the plan's multiplier is a float).
    t.push_back(
        {"static_scale", Kind::number,
         "a positive number that is an fp32 value, e.g. 1, 0.5, 0.0625", 0,
         [](std::string_view text) -> std::optional<std::string> {
           const auto value = parse_number(text);
           if (!value || !(*value > 0.0) ||
               static_cast<double>(static_cast<float>(*value)) != *value) {
             return std::nullopt;
           }
           return fmt::format("{}", *value);
         },
         [](Draft& d, const FieldValue& v) { d.fixed.static_scale = *parse_number(as_w(v)); },
         [](const Recipe& r) { return fmt::format("{}", r.static_scale); }});
    fixed_flag("pad_inner_dim", &Recipe::pad_inner_dim);
    fixed_flag("enable_fsdp_float8_all_gather", &Recipe::enable_fsdp_float8_all_gather);
    auto gemm = [&](std::string_view key, std::optional<Accumulation> Draft::*slot,
                    Accumulation GemmAccumulation::*member) {
      t.push_back({key, Kind::word, accepted_accumulations(), 0,
                   enum_normalizer(&parse_accumulation, &lower),
                   [slot](Draft& d, const FieldValue& v) { d.*slot = parse_accumulation(as_w(v)); },
                   [member](const Recipe& r) { return std::string(name(r.gemm.*member)); }});
    };
    gemm("gemm.fprop", &Draft::fprop, &GemmAccumulation::fprop);
    gemm("gemm.dgrad", &Draft::dgrad, &GemmAccumulation::dgrad);
    gemm("gemm.wgrad", &Draft::wgrad, &GemmAccumulation::wgrad);
    t.push_back({"module_filter.skip_names",
                 Kind::names,
                 "a list of name globs, e.g. [\"lm_head\", \"*.proj\"]",
                 0,
                 {},
                 [](Draft& d, const FieldValue& v) {
                   d.skip_names = std::get<std::vector<std::string>>(v);
                 },
                 [](const Recipe& r) { return names_text(r.module_filter.skip_names); }});
    auto flag = [&](std::string_view key, std::optional<bool> Draft::*slot,
                    bool ModuleFilter::*member) {
      t.push_back({key,
                   Kind::boolean,
                   "true, false",
                   0,
                   {},
                   [slot](Draft& d, const FieldValue& v) { d.*slot = as_b(v); },
                   [member](const Recipe& r) { return bool_text(r.module_filter.*member); }});
    };
    flag("module_filter.skip_first_last_linear", &Draft::skip_first_last,
         &ModuleFilter::skip_first_last_linear);
    flag("module_filter.require_dims_divisible_by_16", &Draft::dims_16,
         &ModuleFilter::require_dims_divisible_by_16);
    flag("module_filter.skip_later_siblings_after_indivisible", &Draft::later_siblings,
         &ModuleFilter::skip_later_siblings_after_indivisible);
    fixed_word("norm_affine_precision", accepted_elementwise_precisions(),
               &parse_elementwise_precision, &Recipe::norm_affine_precision);
    fixed_word("activation_precision", accepted_elementwise_precisions(),
               &parse_elementwise_precision, &Recipe::activation_precision);
    auto keep_list = [&](std::string_view key,
                         std::vector<std::string> KeepHighPrecision::*member) {
      t.push_back(
          {key,
           Kind::regexes,
           "a list of regular expressions over whole Linear names, e.g. "
           "[\"blocks\\.0\\..*\", \"lm_head\"]",
           0,
           {},
           [member](Draft& d, const FieldValue& v) {
             d.fixed.keep_high_precision.*member = std::get<std::vector<std::string>>(v);
           },
           [member](const Recipe& r) { return names_text(r.keep_high_precision.*member); }});
    };
    keep_list("keep_high_precision.layers", &KeepHighPrecision::layers);
    keep_list("keep_high_precision.fprop", &KeepHighPrecision::fprop);
    keep_list("keep_high_precision.dgrad", &KeepHighPrecision::dgrad);
    keep_list("keep_high_precision.wgrad", &KeepHighPrecision::wgrad);
    t.push_back({"autoswitch.enabled",
                 Kind::boolean,
                 "true, false",
                 0,
                 {},
                 [](Draft& d, const FieldValue& v) { d.fixed.autoswitch.enabled = as_b(v); },
                 [](const Recipe& r) { return bool_text(r.autoswitch.enabled); }});
    auto threshold = [&](std::string_view key, std::string accepted, double high,
                         double Autoswitch::*member) {
      t.push_back({key, Kind::number, std::move(accepted), 0,
                   [high](std::string_view text) -> std::optional<std::string> {
                     const auto value = parse_number(text);
                     if (!value || !(*value > 0.0 && *value <= high)) return std::nullopt;
                     return fmt::format("{}", *value);
                   },
                   [member](Draft& d, const FieldValue& v) {
                     d.fixed.autoswitch.*member = *parse_number(as_w(v));
                   },
                   [member](const Recipe& r) { return fmt::format("{}", r.autoswitch.*member); }});
    };
    threshold("autoswitch.underflow_percent", "a percentage in (0, 100], e.g. 5", 100.0,
              &Autoswitch::underflow_percent);
    threshold("autoswitch.mse", "a positive number, e.g. 1e-4", HUGE_VAL, &Autoswitch::mse);
    // role_rules.hpp: the value is the rules' canonical text (per_role_text), read back here.
    t.push_back({"per_role",
                 Kind::rules,
                 "a list of rules, each a mapping of match, roles, scaling, fp8_format, "
                 "power_2_scales, mx_scale_mode, torchao_version, nvfp4_mode, nvfp4_2d, nvfp4_rht, "
                 "nvfp4_stochastic_rounding, mx_2d",
                 0,
                 {},
                 [](Draft& d, const FieldValue& v) {
                   d.fixed.per_role = parse_per_role_text(as_w(v), Site{"per_role", 0});
                 },
                 [](const Recipe& r) { return per_role_text(r.per_role); }});
    add_optimizer_state_fields(t);
    return t;
  }();
  return table;
}

const FieldSpec* find_spec(std::string_view key) {
  for (const auto& s : specs()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

bool parse_bool_word(std::string word, bool& out) {
  word = lower(word);
  if (word == "true" || word == "t" || word == "yes" || word == "y" || word == "on" ||
      word == "1") {
    out = true;
    return true;
  }
  if (word == "false" || word == "f" || word == "no" || word == "n" || word == "off" ||
      word == "0") {
    out = false;
    return true;
  }
  return false;
}

// A field given explicitly that the scaling does not use: an error in a recipe file.
void reject_unused(const Draft& d, Scaling scaling) {
  auto fail = [&](std::string_view key, const std::string& problem, const std::string& accepted) {
    const auto it = d.given.find(key);
    if (it == d.given.end()) return;
    const FieldSetting& s = *it->second;
    throw RecipeError(s.site, s.key, field_text(s.value), problem, accepted);
  };
  if (!uses_amax_history(scaling)) {
    for (std::string_view key : {"amax_history_len", "amax_compute_algo", "margin", "interval"}) {
      // accelerate's own wording for MXFP8 (te-accelerate.md §1.2 step 4).
      const std::string problem =
          scaling == Scaling::mxfp8
              ? fmt::format("is not supported for MXFP8 block scaling (stateless: no amax "
                            "history, no margin); value")
              : fmt::format("is not used by scaling '{}' (only delayed scaling keeps an amax "
                            "history); value",
                            name(scaling));
      fail(key, problem, "remove it, or use scaling: delayed");
    }
  }
  if (!has_power_2_option(scaling)) {
    fail("power_2_scales", fmt::format("is not an option of scaling '{}'; value", name(scaling)),
         "current, tensorwise, rowwise, rowwise_with_gw_hp, block");
  }
  if (!is_mx(scaling)) {
    fail("mx_scale_mode",
         fmt::format("applies to the MX scalings only, not '{}'; value", name(scaling)),
         "scaling: mxfp8, mxfp4, mxfp6_e2m3 or mxfp6_e3m2");
  }
  if (scaling != Scaling::nvfp4) {
    for (std::string_view key :
         {"nvfp4_mode", "nvfp4_2d", "nvfp4_rht", "nvfp4_stochastic_rounding"}) {
      fail(key, fmt::format("applies to scaling nvfp4 only, not '{}'; value", name(scaling)),
           "scaling: nvfp4");
    }
  }
  if (scaling != Scaling::mxfp8) {
    fail("mx_2d",
         fmt::format("is TE's MXFP8BlockScaling.enable_2d_quantization (32 x 32 weight tiles), "
                     "modelled for scaling mxfp8 only, not '{}'; value",
                     name(scaling)),
         "scaling: mxfp8");
  }
  if (scaling == Scaling::delayed) {
    const auto it = d.given.find("backward_override");
    if (it != d.given.end() && d.fixed.backward_override != BackwardOverride::kNone) {
      fail("backward_override",
           "is not an option of delayed scaling (TE's DelayedScaling asserts backward_override "
           "None); value",
           "backward_override: none with scaling: delayed, or another scaling (current, block, "
           "mxfp8 and nvfp4 are TE's)");
    }
  }
  if (scaling != Scaling::static_) {
    fail("static_scale",
         fmt::format("applies to scaling static only, not '{}'; value", name(scaling)),
         "scaling: static");
  }
  if (d.fixed.nvfp4_2d && d.fixed.nvfp4_mode == Nvfp4Mode::kTorchao) {
    fail("nvfp4_2d",
         "is not an option of nvfp4_mode torchao (torchao's nvfp4_quantize, 1 x 16 blocks "
         "only); TE's NVFP4BlockScaling (nvfp4_mode te) and torchao's prototype "
         "NVFP4TrainingConfig (nvfp4_mode torchao_training) have 16 x 16 weight tiles; value",
         "nvfp4_2d: false with nvfp4_mode: torchao, or nvfp4_mode: te or torchao_training");
  }
  for (const auto& [key, value] :
       {std::pair{"gemm.fprop", d.fprop}, std::pair{"gemm.dgrad", d.dgrad},
        std::pair{"gemm.wgrad", d.wgrad}}) {
    if (!value) continue;
    if (subbyte_element_format(scaling) && !gemm_model_takes_subbyte(*value)) {
      fail(key,
           fmt::format("models Hopper's FP8 MMA, which has no FP4/FP6 operands (scaling '{}'); "
                       "value",
                       name(scaling)),
           "blackwell_block (the default), fp32_seq or exact");
    }
    if (*value == Accumulation::kBlackwellBlock && !is_mx(scaling) && scaling != Scaling::nvfp4) {
      fail(key,
           fmt::format("is Blackwell's block-scaled MMA, which reads MX or NVFP4 blocks only, not "
                       "scaling '{}'; value",
                       name(scaling)),
           "fp32_seq, hopper_split, hopper_fast or exact");
    }
  }
  if (d.fixed.nvfp4_rht && d.fixed.nvfp4_mode == Nvfp4Mode::kTorchao) {
    fail("nvfp4_rht",
         "is not an option of nvfp4_mode torchao (torchao's nvfp4_quantize, which has no RHT); "
         "TE's NVFP4BlockScaling (nvfp4_mode te) and torchao's prototype NVFP4TrainingConfig "
         "(nvfp4_mode torchao_training, with TE's fixed sign vector) have it; value",
         "nvfp4_rht: false with nvfp4_mode: torchao, or nvfp4_mode: te or torchao_training");
  }
  if (d.fixed.nvfp4_stochastic_rounding && d.fixed.nvfp4_mode == Nvfp4Mode::kTorchao) {
    fail("nvfp4_stochastic_rounding",
         "is not an option of nvfp4_mode torchao (torchao's nvfp4_quantize, which rounds to "
         "nearest); TE's NVFP4BlockScaling (nvfp4_mode te) and torchao's prototype "
         "NVFP4TrainingConfig (nvfp4_mode torchao_training) round gradients stochastically; value",
         "nvfp4_stochastic_rounding: false with nvfp4_mode: torchao, or nvfp4_mode: te or "
         "torchao_training");
  }
  if (scaling != Scaling::mxfp4) {
    for (std::string_view key : {"mx_stochastic_rounding", "mx_rht"}) {
      fail(key,
           fmt::format("is Tseng et al.'s MXFP4 backward, modelled for scaling mxfp4 only, not "
                       "'{}'; value",
                       name(scaling)),
           "scaling: mxfp4");
    }
  }
  if (d.fixed.mx_stochastic_rounding && d.fixed.mx_scale_mode != E8M0Mode::kFloor) {
    fail("mx_stochastic_rounding",
         fmt::format("is Tseng et al.'s dither_scale, whose scales are E8M0 floor (microxcaling's "
                     "shared exponent), not mx_scale_mode '{}'; value",
                     name(d.fixed.mx_scale_mode)),
         "mx_scale_mode: floor with mx_stochastic_rounding: true");
  }
  if (const auto element = subbyte_element_format(scaling)) {
    fail("fp8_format",
         fmt::format("is not used by scaling '{}', whose every operand is {}; value", name(scaling),
                     sim::spec(*element).name),
         "remove it, or use an FP8 scaling");
  }
  if (!uses_torchao_version(scaling, d.fixed.mx_scale_mode)) {
    const std::string used_by =
        is_mx(scaling) ? fmt::format("mx_scale_mode '{}' (TE's rule, no torchao version)",
                                     name(d.fixed.mx_scale_mode))
                       : fmt::format("scaling '{}'", name(scaling));
    fail("torchao_version",
         fmt::format("applies to the MX torchao scale modes only, not to {}; value", used_by),
         "an MX scaling (mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2) with mx_scale_mode: floor, ceil, "
         "even or rceil");
  }
  if (!d.fixed.autoswitch.enabled) {
    for (std::string_view key : {"autoswitch.underflow_percent", "autoswitch.mse"}) {
      fail(key, "is a threshold of the autoswitch rule, which is off; value",
           "autoswitch.enabled: true beside it");
    }
  }
  if (scaling != Scaling::mxfp8) {
    for (std::string_view key : {"norm_affine_precision", "activation_precision"}) {
      const auto it = d.given.find(key);
      if (it == d.given.end() || field_text(it->second->value) != "mx") continue;
      fail(key,
           fmt::format("mx takes the MX scale rule of scaling mxfp8, not of '{}'; value",
                       name(scaling)),
           "high, bf16 (any scaling), or mx with scaling: mxfp8");
    }
  }
  if (!has_scaled_state(d.fixed.optimizer_states)) {
    for (std::string_view key : {"optimizer_states.scaling", "optimizer_states.expansion"}) {
      fail(key, "applies to fp16 and fp8 states, and neither moment is one; value",
           "optimizer_states.m or .v: fp16, fp8_e4m3 or fp8_e5m2 beside it");
    }
  }
  if (!is_torchao_scaling(scaling)) {
    for (std::string_view key : {"pad_inner_dim", "enable_fsdp_float8_all_gather"}) {
      fail(key, fmt::format("is a torchao option, not used by scaling '{}'; value", name(scaling)),
           "tensorwise, rowwise, rowwise_with_gw_hp");
    }
  }
}

}  // namespace

std::vector<std::string> recipe_field_names() {
  std::vector<std::string> names;
  for (const auto& s : specs()) names.emplace_back(s.key);
  return names;
}

std::string all_field_names() {
  std::string out;
  for (const auto& s : specs()) out += (out.empty() ? "" : ", ") + std::string(s.key);
  return out;
}

bool is_recipe_field(std::string_view key) { return find_spec(key) != nullptr; }

std::string field_text(const Recipe& recipe, std::string_view key) {
  const FieldSpec* spec = find_spec(key);
  return spec ? spec->get(recipe) : std::string("?");
}

std::string field_text(const FieldValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return bool_text(b); }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(const std::string& w) const { return w; }
    std::string operator()(const OverrideLinearPrecision& o) const { return override_text(o); }
    std::string operator()(const std::vector<std::string>& n) const { return names_text(n); }
  };
  return std::visit(Visitor{}, value);
}

Recipe resolve(const std::vector<FieldSetting>& settings, Strictness strictness) {
  Draft d;
  for (const auto& s : settings) {
    const FieldSpec* spec = find_spec(s.key);
    if (!spec) {
      throw RecipeError(s.site, s.key, "", "unknown field", all_field_names(),
                        did_you_mean(s.key, recipe_field_names()));
    }
    spec->apply(d, s.value);
    d.given[s.key] = &s;
  }
  Scaling scaling = d.scaling.value_or(Scaling::delayed);
  if (d.use_mxfp8) {
    if (*d.use_mxfp8) {
      if (strictness == Strictness::file && d.scaling && *d.scaling != Scaling::mxfp8) {
        const FieldSetting& s = *d.given.at("use_mxfp8_block_scaling");
        throw RecipeError(s.site, s.key, "true",
                          fmt::format("contradicts scaling: {}; value", name(*d.scaling)),
                          "scaling: mxfp8, or use_mxfp8_block_scaling: false");
      }
      scaling = Scaling::mxfp8;
    } else if (strictness == Strictness::file && scaling == Scaling::mxfp8) {
      const FieldSetting& s = *d.given.at("use_mxfp8_block_scaling");
      throw RecipeError(s.site, s.key, "false", "contradicts scaling: mxfp8; value",
                        "use_mxfp8_block_scaling: true, or another scaling");
    }
  }
  if (strictness == Strictness::file) reject_unused(d, scaling);

  Recipe r = d.fixed;
  r.scaling = scaling;
  r.fp8_format = d.fp8_format.value_or(default_fp8_format(scaling));
  r.power_2_scales = d.power_2_scales.value_or(default_power_2_scales(scaling));
  const GemmAccumulation gemm = default_gemm_accumulation(scaling);
  r.gemm = {d.fprop.value_or(gemm.fprop), d.dgrad.value_or(gemm.dgrad),
            d.wgrad.value_or(gemm.wgrad)};
  ModuleFilter filter = default_module_filter(scaling);
  if (d.skip_names) filter.skip_names = *d.skip_names;
  if (d.skip_first_last) filter.skip_first_last_linear = *d.skip_first_last;
  if (d.dims_16) filter.require_dims_divisible_by_16 = *d.dims_16;
  if (d.later_siblings) filter.skip_later_siblings_after_indivisible = *d.later_siblings;
  r.module_filter = std::move(filter);
  r.keep_high_precision = canonical_keep_high_precision(std::move(r.keep_high_precision));
  if (const auto it = d.given.find("per_role"); it != d.given.end()) {
    check_per_role(r, it->second->site);
  }
  if (const auto problem = check_optimizer_states(r.optimizer_states)) {
    const auto it = d.given.find(problem->key);
    const FieldSetting* s = it != d.given.end() ? it->second : nullptr;
    throw RecipeError(s ? s->site : Site{}, problem->key, s ? field_text(s->value) : "",
                      problem->problem, problem->accepted);
  }
  return r;
}

namespace detail {

std::optional<OverrideLinearPrecision> parse_override(const YAML::Node& node) {
  std::vector<std::string> words;
  if (node.IsSequence()) {
    for (const auto& item : node) {
      if (!item.IsScalar()) return std::nullopt;
      words.push_back(item.Scalar());
    }
  } else if (node.IsScalar()) {
    std::string text = node.Scalar();
    // The documented tuple-string "(false, false, true)" and the CLI form "F,F,T".
    if (text.size() >= 2 && text.front() == '(' && text.back() == ')') {
      text = text.substr(1, text.size() - 2);
    }
    std::string word;
    for (char c : text + ",") {
      if (c == ',') {
        words.push_back(word);
        word.clear();
      } else if (!std::isspace(static_cast<unsigned char>(c))) {
        word += c;
      }
    }
  } else {
    return std::nullopt;
  }
  if (words.size() != 3) return std::nullopt;
  OverrideLinearPrecision o;
  if (!parse_bool_word(words[0], o.fprop) || !parse_bool_word(words[1], o.dgrad) ||
      !parse_bool_word(words[2], o.wgrad)) {
    return std::nullopt;
  }
  return o;
}

namespace {
// A keep_high_precision pattern: not empty (it would match no Linear) and a valid ECMAScript
// regular expression.
void check_regex(const std::string& pattern, const Site& site, const std::string& display,
                 const std::string& accepted) {
  if (pattern.empty()) {
    throw RecipeError(site, display, pattern, "an empty pattern matches no Linear; value",
                      accepted);
  }
  try {
    std::regex compiled(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw RecipeError(site, display, pattern,
                      fmt::format("is not a valid regular expression ({}):", e.what()), accepted);
  }
}
}  // namespace

FieldSetting parse_field(const std::string& key, const YAML::Node& value, const Site& site,
                         const std::string& display) {
  const FieldSpec* spec = find_spec(key);
  if (!spec) {
    throw RecipeError(site, display, "", "unknown field", all_field_names(),
                      did_you_mean(key, recipe_field_names()));
  }
  switch (spec->kind) {
    case Kind::boolean: return {key, as_bool(value, site, display), site};
    case Kind::integer: {
      const std::int64_t i = as_int(value, site, display, spec->accepted);
      if (i < spec->min_int) {
        const std::string problem = spec->min_int == 0 ? "must not be negative, got"
                                                       : "must be at least 1, got";
        throw RecipeError(site, display, std::to_string(i), problem, spec->accepted);
      }
      if (const auto* limit = integer_limit(key); limit && !limit->contains(i)) {
        throw RecipeError(site, display, std::to_string(i), "out of range, got", spec->accepted);
      }
      return {key, i, site};
    }
    case Kind::word: {
      const std::string word = as_scalar(value, site, display, spec->accepted);
      if (const auto normalized = spec->normalize(word)) return {key, *normalized, site};
      std::vector<std::string> candidates;
      std::string accepted = spec->accepted;
      for (std::size_t start = 0; start < accepted.size();) {
        const std::size_t end = std::min(accepted.find(", ", start), accepted.size());
        candidates.push_back(accepted.substr(start, end - start));
        start = end + 2;
      }
      throw RecipeError(site, display, word, "unknown value", spec->accepted,
                        did_you_mean(word, candidates));
    }
    case Kind::triple: {
      if (const auto o = parse_override(value)) return {key, *o, site};
      throw RecipeError(site, display, describe_node(value),
                        "must be three booleans (fprop, dgrad, wgrad), got", spec->accepted);
    }
    case Kind::names:
    case Kind::regexes: {
      if (!value.IsSequence()) {
        throw RecipeError(site, display, describe_node(value), "wrong type: expected a list, got",
                          spec->accepted);
      }
      std::vector<std::string> items;
      for (const auto& item : value) {
        const Site item_site = site_of(site.file, item);
        std::string text = as_scalar(item, item_site, display, spec->accepted);
        if (spec->kind == Kind::regexes) check_regex(text, item_site, display, spec->accepted);
        items.push_back(std::move(text));
      }
      return {key, items, site};
    }
    case Kind::rules: return {key, per_role_text(parse_per_role(value, site.file, display)), site};
    case Kind::number: {
      const std::string text = as_scalar(value, site, display, spec->accepted);
      if (const auto normalized = spec->normalize(text)) return {key, *normalized, site};
      const char* problem = parse_number(text) ? "out of range, got"
                                               : "wrong type: expected a number, got";
      throw RecipeError(site, display, text, problem, spec->accepted);
    }
  }
  return {key, false, site};
}

}  // namespace detail
}  // namespace fp8lab::recipes
