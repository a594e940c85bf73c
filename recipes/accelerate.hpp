// What people already have: an accelerate config file (`fp8_config:` section) or the
// ACCELERATE_FP8_* environment variables, read exactly as accelerate reads them
// (te-accelerate.md §1.1 defaults and env vars, §1.7 YAML keys and launch flow).
//
// The environment is passed in as a map: nothing here reads the process environment.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/error.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

enum class Fp8Backend : std::uint8_t { TE, AO };

enum class SettingSource : std::uint8_t { accelerate_default, config_file, environment };

template <class T>
struct Setting {
  T value;
  SettingSource source = SettingSource::accelerate_default;
  Site site{};  // where it was written (file:line or the environment variable)
  bool given() const { return source != SettingSource::accelerate_default; }
};

// A key or variable that accelerate accepts without error but never reads.
struct IgnoredInput {
  std::string name;  // as written, e.g. "fp8_config.amax_history_length"
  std::string value;
  Site site;
  std::string why;
};

// TERecipeKwargs + AORecipeKwargs as accelerate would build them. Defaults are accelerate's.
struct AccelerateFp8Settings {
  std::string origin;                 // the file, or "environment"
  std::optional<Fp8Backend> backend;  // empty: accelerate auto-detects (torchao > TE > MSAMP)
  Site backend_site{};
  std::optional<std::string> mixed_precision;   // the config file's top-level key, if present
  std::optional<std::string> distributed_type;  // likewise (DEEPSPEED changes the recipe)
  Setting<bool> use_autocast_during_eval{false};
  Setting<std::int64_t> margin{0};
  Setting<std::int64_t> interval{1};
  Setting<Fp8Format> fp8_format{Fp8Format::kHybrid};
  Setting<std::int64_t> amax_history_len{1024};
  Setting<AmaxComputeAlgo> amax_compute_algo{AmaxComputeAlgo::kMostRecent};
  Setting<OverrideLinearPrecision> override_linear_precision{{}};
  // The documented YAML form `(false, false, true)` is a string to YAML; accelerate launch splits
  // it into characters and its str_to_bool("(") raises (te-accelerate.md §1.7). fp8lab reads it.
  std::string override_written_as_string;  // that string; empty when written as a list
  Setting<bool> use_mxfp8_block_scaling{false};
  Setting<bool> pad_inner_dim{true};                  // AORecipeKwargs
  Setting<bool> enable_fsdp_float8_all_gather{true};  // AORecipeKwargs
  std::vector<IgnoredInput> ignored;
};

// accelerate's utils/environment.py str_to_bool: y, yes, t, true, on, 1 / n, no, f, false, off, 0
// (case-insensitive, nothing stripped). Empty for anything else (accelerate raises ValueError).
std::optional<bool> accelerate_str_to_bool(std::string_view text);

AccelerateFp8Settings read_accelerate_config(const std::string& path);
AccelerateFp8Settings parse_accelerate_config_text(const std::string& text,
                                                   const std::string& file);
// The entries of `env` whose names start with ACCELERATE_FP8_: accelerate's FP8 inputs, the only
// ones read_accelerate_env looks at (the others, ACCELERATE_MIXED_PRECISION included, are not).
std::map<std::string, std::string> accelerate_fp8_variables(
    const std::map<std::string, std::string>& env);
// Reads accelerate_fp8_variables(env).
AccelerateFp8Settings read_accelerate_env(const std::map<std::string, std::string>& env);
// Every ACCELERATE_FP8_* variable accelerate reads, sorted (for messages and --help).
std::vector<std::string> accelerate_env_variables();

// True when a YAML document looks like an accelerate config (fp8_config, mixed_precision,
// compute_environment or distributed_type at the top level) rather than an fp8lab recipe file.
bool looks_like_accelerate_config(const std::string& text);

// What fp8lab runs by default for these settings: what the user asked for, not what TE does
// (compatibility.hpp has the TE-effective recipe).
Recipe recipe_as_asked(const AccelerateFp8Settings& settings);

}  // namespace fp8lab::recipes
