// Numerically equivalent recipes collapse to one canonical recipe, so that a sweep runs each
// distinct computation once. Every rule states why two recipes give the same bits; each rule that
// changes something adds its reason.
//
//   1. override (true, true, true): every GEMM runs in high precision (docs/numerics.md §2.1, §3), so
//      no FP8 field matters: all of them take fixed values (norm_affine_precision and
//      activation_precision too: such a recipe is the baseline, nothing is quantized).
//   2. A scaling that keeps no amax history (all but delayed) ignores margin, interval,
//      amax_history_len and amax_compute_algo (te-accelerate.md §4.1 for MXFP8).
//   3. amax_history_len 1: max over one step's amax is that amax, i.e. most_recent (§2.6).
//   4. Gradients never quantized (dgrad overridden, and wgrad overridden or high precision by the
//      recipe): HYBRID and E4M3 both quantize only forward tensors, in E4M3 (§2.2).
//   5. rowwise_with_gw_hp already runs wgrad in high precision: a wgrad override changes nothing.
//   6. An overridden (high-precision) GEMM uses no accumulation model of its own (fp32_seq).
//   7. Options of other scalings: power_2_scales, mx_scale_mode, pad_inner_dim,
//      enable_fsdp_float8_all_gather take their defaults where the scaling has no such option;
//      torchao_version too, except for mxfp8 with a torchao scale mode (uses_torchao_version);
//      norm_affine_precision / activation_precision mx outside mxfp8 (no MX scale rule) runs high.
//   8. keep_high_precision in canonical order (recipe.hpp, canonical_keep_high_precision); its
//      per-GEMM list of a GEMM already in high precision (override, rowwise_with_gw_hp's wgrad)
//      is emptied: those GEMMs run in high precision in every layer anyway. Autoswitch
//      thresholds of a disabled rule take their defaults.
//   9. per_role (role_rules.hpp, canonicalize_per_role): patterns sorted, roles of overridden
//      GEMMs, fields and rules that change nothing dropped, a leading rule over every Linear and
//      role folded into the recipe's own fields (then rules 1-8 run again).
//  10. backward_override (recipe.hpp; run first): high_precision becomes override_linear_precision's
//      dgrad and wgrad (the same GEMMs on the same operands); dequantized is dropped under delayed
//      scaling (TE asserts None), or where no backward GEMM reads the forward's codes (fprop
//      overridden: then dgrad and wgrad are overridden; dgrad and wgrad both overridden). Under
//      dequantized, rules 4 and 6 count dgrad and wgrad as high precision (gradients are never
//      quantized); rule 8 keeps their keep_high_precision lists (those read the unquantized
//      operands, dequantized the codes). mx_2d is dropped outside mxfp8 (rule 7's kind).
#pragma once

#include <string>
#include <vector>

#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

struct Canonical {
  Recipe recipe;
  std::vector<std::string> reasons;  // empty: the recipe was already canonical
};

Canonical canonicalize(const Recipe& recipe);

}  // namespace fp8lab::recipes
