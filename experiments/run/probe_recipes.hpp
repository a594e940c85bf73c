// The recipes a run probes (recipes/probe_settings.hpp), checked up front on the workload: bad
// input is refused before anything trains, naming where the probe was given.
#pragma once

#include <string>
#include <vector>

#include "recipes/probe_settings.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::experiments {

// Each probe word of `settings` as its recipe, checked on `workload`: the workload is one fp8lab
// trains in this process (not fp8lab.sweep's python one), and its model converts under the
// recipe as an FP8 run's would (run_hooks.hpp: fp8_hooks, on sim) with at least one Linear in
// FP8. Throws recipes::RecipeError at settings.site naming settings.field[i] otherwise.
std::vector<recipes::Recipe> checked_probe_recipes(const recipes::ProbeSettings& settings,
                                                   const std::string& workload);

}  // namespace fp8lab::experiments
