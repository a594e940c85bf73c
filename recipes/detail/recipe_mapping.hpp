// Internal to recipes/: a YAML mapping of recipe fields -> FieldSettings (recipe files, the `base:`
// of sweep files). Nested `gemm:` / `module_filter:` mappings become dotted keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "recipes/fields.hpp"

namespace fp8lab::recipes::detail {

// `prefix` is prepended to field names in messages (e.g. "base.").
std::vector<FieldSetting> parse_recipe_mapping(const YAML::Node& mapping, const std::string& file,
                                               const std::string& prefix);

}  // namespace fp8lab::recipes::detail
