// The recipe fields as they are written in fp8lab recipe files and sweep files: one table, used by
// the recipe-file reader (recipe_file.hpp), the sweep reader (sweep.hpp) and the dry-run printout.
//
// Keys (nested `gemm:` and `module_filter:` mappings are written as dotted keys in sweeps):
//   scaling, use_mxfp8_block_scaling, fp8_format, margin, interval, amax_history_len,
//   amax_compute_algo, override_linear_precision, use_autocast_during_eval, power_2_scales,
//   mx_scale_mode, torchao_version, pad_inner_dim, enable_fsdp_float8_all_gather, gemm.fprop,
//   gemm.dgrad, gemm.wgrad, module_filter.skip_names, module_filter.skip_first_last_linear,
//   module_filter.require_dims_divisible_by_16, module_filter.skip_later_siblings_after_indivisible,
//   norm_affine_precision, activation_precision, keep_high_precision.*, autoswitch.*,
//   per_role (a list of rules, role_rules.hpp; its value is the rules' canonical text),
//   optimizer_states.m, optimizer_states.v, optimizer_states.scaling, optimizer_states.expansion,
//   master_weights (optimizer_states.hpp)
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "recipes/error.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

// One parsed value: bool, integer, a word (enum name, already validated), an override triple, or a
// list of names.
using FieldValue =
    std::variant<bool, std::int64_t, std::string, OverrideLinearPrecision, std::vector<std::string>>;

struct FieldSetting {
  std::string key;
  FieldValue value;
  Site site;
};

// How resolve() treats a field the chosen scaling does not use (e.g. margin with mxfp8):
//   file:  an error naming the field (a recipe file says exactly one thing);
//   sweep: accepted, and canonicalize() later says the combination ignores it.
enum class Strictness { file, sweep };

// Apply the settings in order (a later setting of the same key wins) over the defaults, then fill
// the defaults that depend on the scaling (recipe.hpp: default_*). Throws RecipeError.
Recipe resolve(const std::vector<FieldSetting>& settings, Strictness strictness);

std::vector<std::string> recipe_field_names();
bool is_recipe_field(std::string_view key);
std::string all_field_names();  // comma-separated, for "accepted:" in messages
// The value of one field of a recipe, as it would be written in a file (for the dry-run table).
std::string field_text(const Recipe& recipe, std::string_view key);
std::string field_text(const FieldValue& value);

}  // namespace fp8lab::recipes
