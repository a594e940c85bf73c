// The two recipe fields a report's heatmap is drawn over (--heatmap-axes): checked by fp8lab
// sweep before any run starts, against the fields the sweep varies, and by the report against the
// fields its records vary.
#pragma once

#include <string>
#include <vector>

namespace fp8lab::recipes {

// Throws std::invalid_argument naming --heatmap-axes, the value and the accepted fields unless
// `axes` are two different recipe fields among `varied` (the fields the runs vary).
void check_heatmap_axes(const std::vector<std::string>& axes,
                        const std::vector<std::string>& varied);

}  // namespace fp8lab::recipes
