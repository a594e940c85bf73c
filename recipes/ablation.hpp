// Layer ablation (sweep `method: ablate`, issue 18 §3): for one recipe that degrades, the runs
// that say which Linears (or GEMMs) carry its loss gap:
//   all      the recipe as given (every converted Linear in FP8)
//   all_but  every Linear in FP8 except layer i (or only GEMM g of layer i) in high precision
//   only     layer i (or only GEMM g of it) in FP8, every other Linear in high precision
// each on the sweep's seeds, beside the baseline. Each arm is the recipe plus keep_high_precision
// settings (recipe.hpp), so an arm is an ordinary run with its own run id; the report
// (experiments/stats/ablation.hpp) ranks the layers by the share of the paired loss gap.
//
//   ablate:
//     layers: [blocks.0.attn_qkv, blocks.0.mlp_fc]   # optional: by default every Linear the
//                                                     # recipe converts in the sweep's workload
//     per_gemm: false                                  # true: also one arm per (layer, GEMM)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/error.hpp"
#include "recipes/fields.hpp"
#include "sim/settings.hpp"

namespace fp8lab::recipes {

struct Ablation {
  std::vector<std::string> layers;  // fully qualified Linear names; empty: the workload's
  bool per_gemm = false;
  Site site;
};

struct AblationArm {
  std::string kind;                        // "all", "all_but", "only"
  std::string layer;                       // empty for "all"
  std::optional<sim::scaling::Gemm> gemm;  // nullopt: every GEMM of the layer
  std::vector<FieldSetting> settings;      // keep_high_precision.* after the base recipe's
  // "all", "all_but blocks.0.mlp_fc", "only blocks.0.mlp_fc:wgrad".
  std::string label() const;
};

// A regular expression matching exactly `name` (ECMAScript special characters escaped).
std::string regex_escape(std::string_view name);

// The arms, in order: all; then per layer all_but, only; then with per_gemm per (layer, GEMM)
// all_but, only. Throws RecipeError (at ablation.site) for no layers or a layer given twice.
std::vector<AblationArm> ablation_arms(const Ablation& ablation);

}  // namespace fp8lab::recipes
