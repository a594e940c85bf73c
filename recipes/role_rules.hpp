// Per-role recipes: which scaling, format and sub-byte options quantize each tensor role of each
// Linear, by module-name pattern, as TE's CustomRecipe chooses a quantizer per module and role
// (transformer_engine/common/recipe/__init__.py, CustomRecipe.qfactory(QuantizerRole)) and
// torchao's configs do per module through quantize_'s filter_fn.
//
// A recipe's `per_role` is a list of rules (recipe.hpp, RoleRule). In a file:
//
//   scaling: mxfp8                       # the recipe's defaults: every role not named below
//   per_role:
//     - match: 'blocks\.\d+\.mlp_.*'     # regexes over whole Linear names (keep_high_precision's
//       scaling: nvfp4                   #   rule); none: every Linear
//       nvfp4_2d: true
//     - roles: [dgrad_grad_output, wgrad_grad_output]   # none: all six
//       mx_scale_mode: rceil
//
// The roles are the six operands of a Linear's three GEMMs (backend.hpp's table): fprop_input,
// fprop_weight, dgrad_grad_output, dgrad_weight, wgrad_input, wgrad_grad_output. A rule sets
// scaling, fp8_format, power_2_scales, mx_scale_mode, torchao_version, nvfp4_mode, nvfp4_2d,
// nvfp4_rht, nvfp4_stochastic_rounding. The recipe of a (Linear, role) is the recipe with every
// rule that matches both applied in order (a later rule wins); a rule that changes the scaling
// starts from that scaling's defaults (fp8_format, power_2_scales, the GEMM models, the MX and
// NVFP4 options), then sets its own fields. A GEMM's accumulation model is that recipe's for the
// GEMM; its two operands must agree on it (lowering.hpp: gemm_accumulation).
//
// Not modelled: delayed scaling (one amax history per Linear tensor, not per role) as the recipe's
// scaling or a rule's; TE's HybridQuantizer "rowwise_dequantized" source (a backward copy
// quantized from the forward copy's dequantized values): every copy here is quantized from the
// high-precision tensor.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/error.hpp"
#include "recipes/recipe.hpp"
#include "sim/scaling/plan.hpp"
#include "sim/settings.hpp"

namespace fp8lab::recipes {

enum class Role : std::uint8_t {
  kFpropInput,
  kFpropWeight,
  kDgradGradOutput,
  kDgradWeight,
  kWgradInput,
  kWgradGradOutput,
};
inline constexpr std::array<Role, 6> kRoles{Role::kFpropInput,      Role::kFpropWeight,
                                            Role::kDgradGradOutput, Role::kDgradWeight,
                                            Role::kWgradInput,      Role::kWgradGradOutput};
inline constexpr std::uint8_t kAllRoles = 0x3f;
inline constexpr std::uint8_t role_bit(Role r) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(r));
}
// At most this many rules in one recipe.
inline constexpr std::size_t kMaxRoleRules = 16;

std::string_view name(Role);
std::optional<Role> parse_role(std::string_view);
std::string accepted_roles();  // "fprop_input, fprop_weight, ..."
// The role of `operand` in `gemm`; throws std::invalid_argument for an operand the GEMM lacks.
Role role_of(sim::scaling::Operand operand, sim::scaling::Gemm gemm);
sim::scaling::Operand operand_of(Role);
sim::scaling::Gemm gemm_of(Role);

// The rules as one flow-YAML sequence in canonical spelling (fixed key order, regexes quoted,
// `match` left out when empty, `roles` when all six); "[]" for none. Reads back with
// parse_per_role_text. Part of the canonical string.
std::string per_role_text(const std::vector<RoleRule>& rules);
// Reads per_role_text's form (any YAML sequence of rules). Throws RecipeError at `site`.
std::vector<RoleRule> parse_per_role_text(const std::string& text, const Site& site);

// The rule errors that depend on the recipe: its scaling (delayed is refused), and each rule's
// fields against the scaling that rule's roles run (e.g. nvfp4_2d under mxfp8). Throws
// RecipeError at `site` naming per_role[i].<field>, the value and what is accepted.
void check_per_role(const Recipe& recipe, const Site& site);

// Whether one of the rule's patterns matches the whole name (std::regex_match, ECMAScript), or
// the rule has none.
bool rule_matches(const RoleRule& rule, std::string_view layer);
// The recipe that quantizes `role` of the Linear named `layer` (its per_role is left as given).
Recipe role_recipe(const Recipe& recipe, std::string_view layer, Role role);
// As role_recipe, for a Linear whose name is not known: the rules without `match` apply. Throws
// std::invalid_argument naming the first rule with a pattern, whose Linears only a name decides.
Recipe role_recipe(const Recipe& recipe, Role role);
// The recipe of one Linear: the rules that match `layer`, their patterns dropped (so that
// role_recipe(for_layer(r, l), role) == role_recipe(r, l, role) with no name). What a backend's
// scaling state of that Linear holds.
Recipe for_layer(const Recipe& recipe, std::string_view layer);
// Every recipe some (Linear, `role`) can get: the rules naming `role` applied in each subset, in
// order (at most 2^kMaxRoleRules; recipes list each once). For questions asked without a model
// (does any plan round stochastically?).
std::vector<Recipe> role_recipes(const Recipe& recipe, Role role);
// The patterns of per_role's rules (in order, each once) that match none of `layers`: a warning,
// as for keep_high_precision (unmatched_keep.hpp).
std::vector<std::string> unmatched_role_patterns(const Recipe& recipe,
                                                 const std::vector<std::string>& layers);

// canonicalize's rule 9 (canonical.hpp): per_role in canonical form. Each rule's patterns sorted
// and deduplicated; roles of overridden GEMMs dropped; fields that change nothing dropped (a
// scaling equal to the one the rule's roles already run where no earlier rule sets a scaling; a
// field equal to the value it replaces where no earlier rule sets it or the scaling; nvfp4_2d on
// no weight role, nvfp4_rht on no wgrad input or grad_output role, nvfp4_stochastic_rounding on no
// grad_output role); rules left with no field or no role dropped; a first rule with no pattern
// over all six roles folded into the recipe's own fields (when norm_affine_precision and
// activation_precision are not mx, which read the recipe's own scaling). Appends a reason for
// each change.
void canonicalize_per_role(Recipe& recipe, std::vector<std::string>& reasons);

// For people (describe, explain): one line per rule, then the plan of each of its roles in a
// Linear that only this rule matches.
std::string describe_per_role(const Recipe& recipe);
// One plan in words, as the lowering golden tables write it: kind, element format, block
// ("all" = the whole dimension), axis along K, then pow2, the MX mode and torchao version, the
// NVFP4 mode, rht, sr where they apply; "high_precision" for a GEMM in high precision.
std::string plan_text(const sim::scaling::QuantizePlan& plan);

}  // namespace fp8lab::recipes
