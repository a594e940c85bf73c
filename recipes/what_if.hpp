// What-if recipes: other recipes whose quantization of the very tensors a run trains on is
// measured beside the run's own (the per-layer statistics sidecar, docs/results-schema.md), as
// Transformer Engine's LogFp8TensorStats does with a `<recipe>_` prefix (mxfp8_underflows% while
// training with current scaling). Named by their scaling: `what_if: [mxfp8, block, rowwise]` in a
// sweep, `--what-if mxfp8,block` for `fp8lab run`; each is that scaling with its defaults
// (fields.hpp resolve), lowered by recipes/lowering.hpp like any recipe.
//
// delayed is refused: its scale comes from an amax history of its own quantizations, which a
// measurement that never feeds the training cannot have.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "recipes/error.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

// The recipe a what-if name stands for. Throws RecipeError at `site` naming `field`, the value
// and the accepted names.
Recipe what_if_recipe(std::string_view name, const Site& site, const std::string& field);

// The accepted names, comma-separated (every scaling but delayed).
std::string accepted_what_if_names();

}  // namespace fp8lab::recipes
