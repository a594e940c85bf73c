// Internal to recipes/: turning one YAML value into a FieldSetting of fields.hpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "recipes/fields.hpp"

namespace fp8lab::recipes::detail {

// `key` must be a recipe field (else RecipeError with "did you mean"); `display` is the name used
// in messages (e.g. "parameters.margin.values[2]"). Throws RecipeError on a bad value.
FieldSetting parse_field(const std::string& key, const YAML::Node& value, const Site& site,
                         const std::string& display);

// Three booleans from a sequence [a, b, c] or from the tuple-string forms "(a, b, c)" / "a,b,c"
// (words: true/false/yes/no/on/off/t/f/y/n/1/0, any case). Empty when it is neither.
std::optional<OverrideLinearPrecision> parse_override(const YAML::Node& node);

// A `per_role` value (role_rules.hpp): a list of rule mappings, each checked (keys, roles, words,
// regexes) on its own; errors name `display`[i].key and the line. Defined in role_rules.cpp.
std::vector<RoleRule> parse_per_role(const YAML::Node& node, const std::string& file,
                                     const std::string& display);

}  // namespace fp8lab::recipes::detail
