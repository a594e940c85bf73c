// Internal to recipes/: the sweep key `instability:` read from its YAML node
// (instability_rule.hpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "recipes/instability_rule.hpp"

namespace fp8lab::recipes::detail {

InstabilityRule parse_instability(const YAML::Node& node, const Site& site,
                                  const std::string& file);

}  // namespace fp8lab::recipes::detail
