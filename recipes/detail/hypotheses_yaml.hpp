// Internal to recipes/: the sweep key `hypotheses:` read from its YAML node (sweep_hypotheses.hpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "recipes/sweep_hypotheses.hpp"

namespace fp8lab::recipes::detail {

// The mapping's structure, alpha and band; the labels are checked later against the parameters
// (check_hypotheses), which may come after it in the file.
SweepHypotheses parse_hypotheses(const YAML::Node& node, const Site& site, const std::string& file);

}  // namespace fp8lab::recipes::detail
