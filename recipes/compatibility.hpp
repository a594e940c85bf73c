// "What actually runs": for accelerate settings, the recipe accelerate + Transformer Engine (2.x,
// HEAD as read in te-accelerate.md §0) really execute, and every field accelerate or TE silently
// drops or changes on the way (te-accelerate.md §1.2 "diff against accelerate defaults", §1.7).
//
// fp8lab runs `asked` by default; `te_effective` is what a run "as TE would" uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "recipes/accelerate.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

struct Quirk {
  std::string field;      // e.g. "amax_compute_algo"
  std::string asked;      // what the settings say
  std::string runs;       // what accelerate/TE execute instead ("" = TE refuses to run)
  std::string why;        // one sentence, naming the mechanism
  std::string reference;  // e.g. "te-accelerate.md §1.2"
};

struct Compatibility {
  Recipe asked;
  Recipe te_effective;
  std::string runner;  // "accelerate + Transformer Engine", "Transformer Engine", "torchao", ...
  std::string te_recipe_class;  // DelayedScaling, MXFP8BlockScaling, Float8LinearConfig
  std::vector<std::string> forwarded_kwargs;  // what accelerate passes to that class, "name=value"
  bool runnable = true;  // false: accelerate or TE refuses to start with these settings
  // Set when the peer trains without FP8 at all, to the precision it trains in instead: an
  // accelerate config whose mixed_precision is not fp8 ("bf16", "fp16", "no") never exports its
  // fp8_config (te-accelerate.md §1.7). runnable is false then too; te_effective means nothing.
  std::optional<std::string> trains_without_fp8;
  std::vector<Quirk> quirks;
};

Compatibility compatibility(const AccelerateFp8Settings& settings);
// For an fp8lab recipe: delayed and mxfp8 as if given to accelerate's TERecipeKwargs (the seed
// API); current and block as TE's own Float8CurrentScaling / Float8BlockScaling; torchao scalings
// as torchao's Float8LinearConfig recipe. Adds the fp8lab-only choices TE cannot make (GEMM
// accumulation models, MX scale modes).
Compatibility compatibility(const Recipe& recipe);

// For a peer that trains without FP8 (trains_without_fp8): the fp8lab command that trains what it
// trains, the high-precision baseline alone ("fp8lab run --workload W --baseline-only
// --baseline-precision bf16"; bf16 for fp16 too, the closest: fp8lab has no fp16 baseline).
std::string no_fp8_baseline_command(const Compatibility& compatibility);

// The text `fp8lab explain` prints for accelerate settings: the recipe fp8lab runs, the
// TE-effective recipe, and every quirk.
// `origin` is the first line, e.g. "accelerate config run.yaml".
std::string format_compatibility(const Compatibility& compatibility, const std::string& origin);

}  // namespace fp8lab::recipes
