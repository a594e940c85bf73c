#include "recipes/accelerate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "recipes/detail/field_parse.hpp"
#include "recipes/detail/text_case.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/limits.hpp"
#include "recipes/text_file.hpp"
#include "recipes/utf8.hpp"
#include "sim/name_table.hpp"
#include "sim/settings.hpp"

namespace fp8lab::recipes {
namespace {

using detail::lower;
using detail::upper;

constexpr std::string_view kPrefix = "ACCELERATE_FP8_";
const std::string kTruthWords = "y, yes, t, true, on, 1, n, no, f, false, off, 0";

// One input as accelerate sees it after `accelerate launch` (§1.7): the text of the value (what
// str(value) gives), where it came from, and the name to use in messages.
struct Input {
  std::string text;
  Site site;
  std::string field;  // "fp8_config.margin" or "ACCELERATE_FP8_MARGIN"
  SettingSource source;
};

template <class T>
void set(Setting<T>& setting, T value, const Input& in) {
  setting = {value, in.source, in.site};
}

bool parse_flag(const Input& in) {
  if (const auto b = accelerate_str_to_bool(in.text)) return *b;
  throw RecipeError(in.site, in.field, in.text,
                    "invalid truth value (accelerate's str_to_bool raises ValueError)",
                    kTruthWords);
}

// An integer within `limit` (limits.hpp). Python's int() takes any size; fp8lab refuses what it
// cannot run as asked.
std::int64_t parse_int(const Input& in, const IntegerLimit& limit) {
  const auto value = detail::parse_python_int(in.text);
  if (!value) {
    const bool digits_only = !in.text.empty() &&
                             in.text.find_first_not_of("+-0123456789_ ") == std::string::npos;
    throw RecipeError(in.site, in.field, in.text,
                      digits_only ? "out of range, got"
                                  : "invalid literal for int() (accelerate raises ValueError)",
                      limit.accepted());
  }
  if (*value < limit.min) {
    throw RecipeError(in.site, in.field, in.text,
                      limit.min == 0 ? "must not be negative, got" : "must be at least 1, got",
                      limit.accepted());
  }
  if (*value > limit.max) {
    throw RecipeError(in.site, in.field, in.text, "out of range, got", limit.accepted());
  }
  return *value;
}

using Reader = std::function<void(AccelerateFp8Settings&, const Input&)>;
using Settings = AccelerateFp8Settings;

Reader flag_reader(Setting<bool> Settings::*member) {
  return [member](Settings& s, const Input& in) { set(s.*member, parse_flag(in), in); };
}

Reader integer_reader(Setting<std::int64_t> Settings::*member, const IntegerLimit& limit) {
  return
      [member, &limit](Settings& s, const Input& in) { set(s.*member, parse_int(in, limit), in); };
}

// One GEMM's flag of TE's override_linear_precision triple.
Reader override_reader(bool OverrideLinearPrecision::*gemm) {
  return [gemm](Settings& s, const Input& in) {
    auto o = s.override_linear_precision.value;
    o.*gemm = parse_flag(in);
    set(s.override_linear_precision, o, in);
  };
}

// A word of `table` after accelerate's case folding (`fold`).
template <class Enum, std::size_t N>
Reader word_reader(Setting<Enum> Settings::*member, const sim::NameTable<Enum, N>& table,
                   std::string (*fold)(std::string_view)) {
  return [member, &table, fold](Settings& s, const Input& in) {
    const std::string folded = fold(in.text);
    const auto value = sim::value_in(table, folded);
    if (!value) {
      std::vector<std::string> words;
      for (const auto& entry : table) words.emplace_back(entry.second);
      throw RecipeError(in.site, in.field, in.text, "unknown value", sim::joined_names(table),
                        did_you_mean(folded, words));
    }
    set(s.*member, *value, in);
  };
}

// The variables TERecipeKwargs / AORecipeKwargs / Accelerator read (te-accelerate.md §1.1, §1.5).
const std::map<std::string, Reader, std::less<>>& readers() {
  static const std::map<std::string, Reader, std::less<>> table = {
      {"ACCELERATE_FP8_BACKEND",
       [](AccelerateFp8Settings& s, const Input& in) {
         // FP8BackendType is a case-sensitive str Enum with uppercase values (§1.5).
         if (in.text == "TE" || in.text == "AO") {
           s.backend = in.text == "TE" ? Fp8Backend::TE : Fp8Backend::AO;
           s.backend_site = in.site;
           return;
         }
         if (in.text == "MSAMP") {
           throw RecipeError(in.site, in.field, in.text,
                             "names a backend fp8lab does not model (MS-AMP); value", "TE, AO");
         }
         const std::string problem =
             in.text == "NO" ? "means no FP8 backend; value"
                             : "unknown backend (accelerate's FP8BackendType is case-sensitive)";
         throw RecipeError(in.site, in.field, in.text, problem, "TE, AO",
                           did_you_mean(in.text, {"TE", "AO", "MSAMP"}));
       }},
      {"ACCELERATE_FP8_USE_AUTOCAST_DURING_EVAL", flag_reader(&Settings::use_autocast_during_eval)},
      {"ACCELERATE_FP8_MARGIN", integer_reader(&Settings::margin, margin_limit())},
      {"ACCELERATE_FP8_INTERVAL", integer_reader(&Settings::interval, interval_limit())},
      // Uppercased first; accelerate's message: "`fp8_format` must be one of HYBRID or E4M3 or E5M2."
      {"ACCELERATE_FP8_FORMAT",
       word_reader(&Settings::fp8_format, sim::scaling::kFp8FormatNames, &upper)},
      {"ACCELERATE_FP8_AMAX_HISTORY_LEN",
       integer_reader(&Settings::amax_history_len, amax_history_len_limit())},
      {"ACCELERATE_FP8_AMAX_COMPUTE_ALGO",
       word_reader(&Settings::amax_compute_algo, sim::scaling::kAmaxComputeAlgoNames, &lower)},
      {"ACCELERATE_FP8_OVERRIDE_FPROP", override_reader(&OverrideLinearPrecision::fprop)},
      {"ACCELERATE_FP8_OVERRIDE_DGRAD", override_reader(&OverrideLinearPrecision::dgrad)},
      {"ACCELERATE_FP8_OVERRIDE_WGRAD", override_reader(&OverrideLinearPrecision::wgrad)},
      {"ACCELERATE_FP8_USE_MXFP8_BLOCK_SCALING", flag_reader(&Settings::use_mxfp8_block_scaling)},
      {"ACCELERATE_FP8_PAD_INNER_DIM", flag_reader(&Settings::pad_inner_dim)},
      {"ACCELERATE_FP8_ENABLE_FSDP_FLOAT8_ALL_GATHER",
       flag_reader(&Settings::enable_fsdp_float8_all_gather)},
      {"ACCELERATE_FP8_OPT_LEVEL",
       [](AccelerateFp8Settings& s, const Input& in) {
         s.ignored.push_back({in.field, in.text, in.site,
                              "MS-AMP's opt_level: fp8lab models the TE and AO backends only"});
       }},
  };
  return table;
}

std::vector<std::string> reader_names() {
  std::vector<std::string> names;
  for (const auto& entry : readers()) names.push_back(entry.first);
  return names;
}

// te-accelerate.md §1.2 step 4: accelerate refuses history settings with MXFP8 when they differ
// from its defaults (only those are forwarded).
void check_mxfp8_history(const AccelerateFp8Settings& s) {
  if (!s.use_mxfp8_block_scaling.value) return;
  if (s.amax_compute_algo.value != AmaxComputeAlgo::kMostRecent) {
    throw RecipeError(s.amax_compute_algo.site,
                      s.origin == "environment" ? "ACCELERATE_FP8_AMAX_COMPUTE_ALGO"
                                                : "fp8_config.amax_compute_algo",
                      std::string(name(s.amax_compute_algo.value)),
                      "is not supported for MXFP8 block scaling (accelerate raises ValueError); "
                      "value",
                      "most_recent (accelerate's default, never forwarded), or "
                      "use_mxfp8_block_scaling: false");
  }
  if (s.amax_history_len.value != 1024) {
    throw RecipeError(s.amax_history_len.site,
                      s.origin == "environment" ? "ACCELERATE_FP8_AMAX_HISTORY_LEN"
                                                : "fp8_config.amax_history_len",
                      std::to_string(s.amax_history_len.value),
                      "is not supported for MXFP8 block scaling (accelerate raises ValueError); "
                      "value",
                      "1024 (accelerate's default, never forwarded), or "
                      "use_mxfp8_block_scaling: false");
  }
}

// Keys the interactive `accelerate config` writes but nothing reads (§1.7 pitfalls).
const std::map<std::string, std::string, std::less<>>& written_but_unread() {
  static const std::map<std::string, std::string, std::less<>> keys = {
      {"amax_history_length",
       "written by `accelerate config`, exported as ACCELERATE_FP8_AMAX_HISTORY_LENGTH, never "
       "read: amax_history_len stays 1024"},
      {"amax_compute_algorithm",
       "written by `accelerate config`, exported as ACCELERATE_FP8_AMAX_COMPUTE_ALGORITHM, never "
       "read: amax_compute_algo stays most_recent"},
      {"optimization_level",
       "written by `accelerate config` (MS-AMP), never read: opt_level stays O2"},
  };
  return keys;
}

void read_fp8_config(AccelerateFp8Settings& s, const YAML::Node& fp8, const std::string& file) {
  if (!fp8.IsMap()) {
    throw RecipeError(detail::site_of(file, fp8), "fp8_config", detail::describe_node(fp8),
                      "expected a mapping, got", "keys such as backend, fp8_format, margin");
  }
  std::vector<std::string> yaml_keys;
  for (const auto& entry : readers()) {
    const std::string key = lower(entry.first.substr(kPrefix.size()));
    yaml_keys.push_back(key == "format" ? "fp8_format" : key);  // `format` works too (fp8_ rule)
  }
  yaml_keys.push_back("override_linear_precision");
  for (const auto& entry : fp8) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    const std::string field = "fp8_config." + key;
    const Site site = detail::site_of(file, value.IsNull() ? entry.first : value);
    if (value.IsNull()) continue;  // None: setup_fp8_env exports only non-None values
    // accelerate launch: key k becomes argument fp8_k unless it starts with "fp8" (§1.7).
    const std::string arg = key.rfind("fp8", 0) == 0 ? key : "fp8_" + key;
    if (const auto it = written_but_unread().find(key); it != written_but_unread().end()) {
      s.ignored.push_back({field, detail::describe_node(value), site, it->second});
      continue;
    }
    if (arg == "fp8_override_linear_precision") {
      const auto o = detail::parse_override(value);
      if (!o) {
        throw RecipeError(site, field, detail::describe_node(value),
                          "must be three booleans (fprop, dgrad, wgrad), got",
                          "a list [false, false, true] (accelerate also documents the string "
                          "(false, false, true), which its launcher cannot parse)");
      }
      s.override_linear_precision = {*o, SettingSource::config_file, site};
      s.override_written_as_string = value.IsScalar() ? value.Scalar() : std::string();
      continue;
    }
    const std::string var = "ACCELERATE_" + upper(arg);
    const auto reader = readers().find(var);
    if (reader == readers().end()) {
      throw RecipeError(site, field, "", "unknown fp8_config key",
                        fmt::format("{}", fmt::join(yaml_keys, ", ")),
                        did_you_mean(key, yaml_keys));
    }
    if (!value.IsScalar()) {
      throw RecipeError(site, field, detail::describe_node(value),
                        "wrong type: expected one value, got", "a single scalar");
    }
    // PyYAML's booleans reach str() as "True"/"False"; yaml-cpp keeps the word, which
    // str_to_bool reads the same way (yes/on/true...).
    reader->second(s, {value.Scalar(), site, field, SettingSource::config_file});
  }
}

}  // namespace

std::optional<bool> accelerate_str_to_bool(std::string_view text) {
  const std::string word = lower(text);
  for (const char* w : {"y", "yes", "t", "true", "on", "1"}) {
    if (word == w) return true;
  }
  for (const char* w : {"n", "no", "f", "false", "off", "0"}) {
    if (word == w) return false;
  }
  return std::nullopt;
}

AccelerateFp8Settings parse_accelerate_config_text(const std::string& text,
                                                   const std::string& file) {
  const YAML::Node root = detail::load_yaml_text(text, file);
  detail::reject_duplicate_keys(root, file);
  if (!root.IsMap()) {
    throw RecipeError({file, detail::line_of(root)}, "accelerate config",
                      detail::describe_node(root), "expected a mapping, got",
                      "an accelerate config file with an fp8_config: section");
  }
  AccelerateFp8Settings s;
  s.origin = file;
  if (const YAML::Node mp = root["mixed_precision"]; mp && mp.IsScalar()) {
    s.mixed_precision = mp.Scalar();
  }
  if (const YAML::Node dt = root["distributed_type"]; dt && dt.IsScalar()) {
    s.distributed_type = dt.Scalar();
  }
  if (const YAML::Node fp8 = root["fp8_config"]; fp8 && !fp8.IsNull()) {
    read_fp8_config(s, fp8, file);
  }
  check_mxfp8_history(s);
  return s;
}

AccelerateFp8Settings read_accelerate_config(const std::string& path) {
  return parse_accelerate_config_text(read_text_file(path), path);
}

std::vector<std::string> accelerate_env_variables() { return reader_names(); }

std::map<std::string, std::string> accelerate_fp8_variables(
    const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> fp8;
  for (const auto& [var, value] : env) {
    if (var.rfind(kPrefix, 0) == 0) fp8.emplace(var, value);
  }
  return fp8;
}

AccelerateFp8Settings read_accelerate_env(const std::map<std::string, std::string>& env) {
  AccelerateFp8Settings s;
  s.origin = "environment";
  for (const auto& [var, text] : accelerate_fp8_variables(env)) {
    const Site site{"environment", 0};
    // Run records keep the variables (run_source.hpp): UTF-8 only, as files (utf8.hpp).
    require_utf8(var, "environment", "variable name");
    require_utf8(text, "environment", var);
    const auto reader = readers().find(var);
    if (reader == readers().end()) {
      const std::string guess = did_you_mean(var, reader_names());
      s.ignored.push_back({var, text, site,
                           "accelerate never reads this variable" +
                               (guess.empty() ? std::string() : " (did you mean " + guess + "?)")});
      continue;
    }
    reader->second(s, {text, site, var, SettingSource::environment});
  }
  check_mxfp8_history(s);
  return s;
}

bool looks_like_accelerate_config(const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return false;
  }
  if (!root.IsMap()) return false;
  for (const char* key :
       {"fp8_config", "mixed_precision", "compute_environment", "distributed_type"}) {
    if (root[key]) return true;
  }
  return false;
}

Recipe recipe_as_asked(const AccelerateFp8Settings& s) {
  Recipe r;
  if (s.backend == Fp8Backend::AO) {
    // AORecipeKwargs with config=None: Float8LinearConfig(pad_inner_dim, enable_fsdp...) is
    // torchao's default "tensorwise" recipe (torchao-mx.md §1.2).
    r.scaling = Scaling::tensorwise;
    r.fp8_format = default_fp8_format(r.scaling);
    r.pad_inner_dim = s.pad_inner_dim.value;
    r.enable_fsdp_float8_all_gather = s.enable_fsdp_float8_all_gather.value;
  } else {
    r.scaling = s.use_mxfp8_block_scaling.value ? Scaling::mxfp8 : Scaling::delayed;
    r.fp8_format = s.fp8_format.value;
    if (r.scaling == Scaling::delayed) {
      r.margin = s.margin.value;
      r.interval = s.interval.value;
      r.amax_history_len = s.amax_history_len.value;
      r.amax_compute_algo = s.amax_compute_algo.value;
    }
  }
  if (s.backend != Fp8Backend::AO) {  // the AO backend reads none of TERecipeKwargs' fields
    r.override_linear_precision = s.override_linear_precision.value;
    r.use_autocast_during_eval = s.use_autocast_during_eval.value;
  }
  r.power_2_scales = default_power_2_scales(r.scaling);
  r.gemm = default_gemm_accumulation(r.scaling);
  r.module_filter = default_module_filter(r.scaling);
  return r;
}

}  // namespace fp8lab::recipes
