// Issue 43 item 1 at the recipes level: per_role rules (recipes/role_rules.hpp) read from recipe
// files and sweep parameters, their errors (file, line, field, accepted), canonical forms, the run
// id of recipes without them, explain's text, and the patterns that match no Linear.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "recipes/canonical.hpp"
#include "recipes/complete_recipe.hpp"
#include "recipes/error.hpp"
#include "recipes/explain.hpp"
#include "recipes/lowering.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/recipe_text.hpp"
#include "recipes/role_rules.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/recipe_text.hpp"

using namespace fp8lab::recipes;
using fp8lab::testing::message_of;
namespace sc = fp8lab::sim::scaling;

namespace {

const char* kMixed = R"(scaling: mxfp8
per_role:
  - match: 'block\d+\.mlp\..*'
    scaling: nvfp4
    nvfp4_2d: true
  - roles: [dgrad_grad_output, wgrad_grad_output]
    match: ['block0\..*', 'block0\..*']
    mx_scale_mode: rceil
)";

}  // namespace

TEST_CASE("per_role: read from a recipe file, in canonical spelling", "[per_role]") {
  const Recipe r = parse_recipe_text(kMixed, "r.yaml");
  REQUIRE(r.per_role.size() == 2);
  CHECK(r.per_role[0].match == std::vector<std::string>{"block\\d+\\.mlp\\..*"});
  CHECK(r.per_role[0].roles == kAllRoles);
  CHECK(r.per_role[0].scaling == Scaling::nvfp4);
  CHECK(r.per_role[0].nvfp4_2d == true);
  // mx_2d on the attention weights only: their plans take 32 x 32 tiles, the MLP's keep 1 x 32.
  const Recipe tiles = parse_recipe_text(
      "scaling: mxfp8\nper_role:\n  - match: '.*attention.*'\n    roles: [fprop_weight, "
      "dgrad_weight]\n    mx_2d: true\n",
      "r.yaml");
  REQUIRE(tiles.per_role.size() == 1);
  CHECK(tiles.per_role[0].mx_2d == true);
  CHECK(plan(tiles, "block0.attention.q_proj", sc::Operand::kWeight, sc::Gemm::kDgrad).block ==
        sc::BlockShape{32, 32});
  CHECK(plan(tiles, "block0.attention.q_proj", sc::Operand::kInput, sc::Gemm::kFprop).block ==
        sc::BlockShape{1, 32});
  CHECK(plan(tiles, "block0.mlp.up_proj", sc::Operand::kWeight, sc::Gemm::kFprop).block ==
        sc::BlockShape{1, 32});
  CHECK(r.per_role[1].roles ==
        (role_bit(Role::kDgradGradOutput) | role_bit(Role::kWgradGradOutput)));
  CHECK(per_role_text(r.per_role) ==
        "[{match: [\"block\\\\d+\\\\.mlp\\\\..*\"], scaling: nvfp4, nvfp4_2d: true}, "
        "{match: [\"block0\\\\..*\", \"block0\\\\..*\"], roles: [dgrad_grad_output, "
        "wgrad_grad_output], mx_scale_mode: rceil}]");
  // The canonical string ends with it; a recipe without per_role keeps its string and run id.
  const Recipe plain = parse_recipe_text("scaling: mxfp8\n", "r.yaml");
  CHECK(canonical_string(plain).find("per_role") == std::string::npos);
  CHECK(canonical_string(r) == canonical_string(plain) + ";per_role=" + per_role_text(r.per_role));
  // The complete recipe text (job files) reads back as the same recipe.
  CHECK(parse_recipe_text(recipe_file_text(r), "again.yaml") == r);
  CHECK(parse_complete_recipe_text(complete_recipe_text(r), "job.yaml") == r);
}

TEST_CASE("per_role: an unknown role is an error naming file, line, field and the roles",
          "[per_role]") {
  const std::string m = message_of(
      "scaling: mxfp8\nper_role:\n  - roles: [fprop_input, dgrad_gradoutput]\n    scaling: "
      "nvfp4\n");
  CHECK_THAT(m, Catch::StartsWith("r.yaml:3: per_role[0].roles: unknown role 'dgrad_gradoutput'"));
  CHECK_THAT(m, Catch::Contains("accepted: fprop_input, fprop_weight, dgrad_grad_output, "
                                "dgrad_weight, wgrad_input, wgrad_grad_output"));
  CHECK_THAT(m, Catch::Contains("did you mean 'dgrad_grad_output'"));
}

TEST_CASE("per_role: other bad rules name the field and what is accepted", "[per_role]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"scaling: mxfp8\nper_role: {scaling: nvfp4}\n",
       "r.yaml:2: per_role: wrong type: expected a list of rules"},
      {"scaling: mxfp8\nper_role:\n  - match: x\n    format: nvfp4\n",
       "r.yaml:4: per_role[0].format: unknown key"},
      {"scaling: mxfp8\nper_role:\n  - match: x\n", "r.yaml:3: per_role[0]: sets no field"},
      {"scaling: mxfp8\nper_role:\n  - match: 'blocks.(0'\n    scaling: nvfp4\n",
       "r.yaml:3: per_role[0].match: is not a valid regular expression"},
      {"scaling: mxfp8\nper_role:\n  - scaling: nvfp5\n",
       "r.yaml:3: per_role[0].scaling: unknown value 'nvfp5'"},
      {"scaling: delayed\nper_role:\n  - scaling: nvfp4\n",
       "r.yaml:3: per_role: needs a stateless scaling"},
      {"scaling: current\nper_role:\n  - scaling: delayed\n",
       "r.yaml:3: per_role[0].scaling: delayed scaling keeps one amax history"},
      {"scaling: mxfp8\nper_role:\n  - nvfp4_2d: true\n",
       "per_role[0].nvfp4_2d: applies to scaling nvfp4 only, not 'mxfp8'"},
      {"scaling: mxfp8\nper_role:\n  - scaling: nvfp4\n    fp8_format: E4M3\n",
       "per_role[0].fp8_format: is not used by scaling 'nvfp4'"},
      {"scaling: mxfp8\nper_role:\n  - scaling: nvfp4\n    nvfp4_mode: torchao\n    nvfp4_rht: "
       "true\n",
       "per_role[0].nvfp4_mode: is torchao's nvfp4_quantize"},
      {"scaling: mxfp8\nper_role:\n  - roles: []\n    scaling: nvfp4\n",
       "per_role[0].roles: names no role"},
      {"scaling: mxfp8\nper_role:\n  - match: 'block\\d+\\.mlp\\..*'\n    scaling: nvfp4\n    "
       "mx_2d: true\n",
       "per_role[0].mx_2d: applies to scaling mxfp8 only, not 'nvfp4'"},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    CHECK_THAT(message_of(text), Catch::Contains(want));
  }
}

TEST_CASE("per_role: canonicalize collapses spellings that mean the same", "[per_role]") {
  // A leading rule over every Linear and role is the recipe's own scaling.
  const Recipe folded = parse_recipe_text("scaling: mxfp8\nper_role:\n  - scaling: nvfp4\n", "r");
  const Recipe nvfp4 = parse_recipe_text("scaling: nvfp4\n", "r");
  CHECK(canonicalize(folded).recipe == canonicalize(nvfp4).recipe);
  CHECK_FALSE(canonicalize(folded).reasons.empty());
  // A scaling equal to the recipe's, roles of overridden GEMMs, options on roles they do not
  // touch: dropped; a rule left with nothing goes.
  const Recipe noisy = parse_recipe_text(R"(scaling: nvfp4
override_linear_precision: [false, false, true]
per_role:
  - match: ['b', 'a', 'b']
    roles: [fprop_input, wgrad_input]
    scaling: nvfp4
    nvfp4_2d: true
    nvfp4_stochastic_rounding: true
  - match: c
    roles: [wgrad_input]
    nvfp4_rht: true
)",
                                         "r");
  const Canonical c = canonicalize(noisy);
  CHECK(c.recipe.per_role.empty());
  CHECK(c.reasons.size() >= 4);
  // Two spellings of one rule set: patterns in another order, roles listed as all.
  const Recipe a = parse_recipe_text(
      "scaling: mxfp8\nper_role:\n  - {match: [y, x], roles: all, scaling: nvfp4}\n", "r");
  const Recipe b =
      parse_recipe_text("scaling: mxfp8\nper_role:\n  - {match: [x, y, x], scaling: nvfp4}\n", "r");
  CHECK(run_id(canonicalize(a).recipe) == run_id(canonicalize(b).recipe));
  CHECK(canonicalize(a).recipe.per_role.size() == 1);
  // Rules that mean something survive: the mixed file is canonical but for its duplicate pattern.
  const Canonical mixed = canonicalize(parse_recipe_text(kMixed, "r"));
  REQUIRE(mixed.recipe.per_role.size() == 2);
  CHECK(mixed.recipe.per_role[1].match == std::vector<std::string>{"block0\\..*"});
  CHECK(canonicalize(mixed.recipe).reasons.empty());
}

TEST_CASE("per_role: explain prints each rule and its plans per role", "[per_role]") {
  const std::string text = explain_text(kMixed, "r.yaml");
  CHECK_THAT(text, Catch::Contains("per_role: 2 rules"));
  CHECK_THAT(text, Catch::Contains("[0] {match: [\"block\\\\d+\\\\.mlp\\\\..*\"], scaling: nvfp4, "
                                   "nvfp4_2d: true}"));
  CHECK_THAT(text, Catch::Contains("fprop_weight       nvfp4 e2m1 16x16 rowwise te"));
  CHECK_THAT(text, Catch::Contains("dgrad_grad_output  mx e5m2 1x32 rowwise rceil torchao-0.18"));
  CHECK_THAT(text, Catch::Contains("per_role: asked 2 rules -> CustomRecipe"));
}

TEST_CASE("per_role: patterns that match no Linear are named", "[per_role]") {
  const Recipe r = parse_recipe_text(kMixed, "r.yaml");
  using Names = std::vector<std::string>;
  CHECK(unmatched_role_patterns(r, {"block0.mlp.up_proj", "block0.attention.q_proj"}).empty());
  CHECK(unmatched_role_patterns(r, {"blocks.0.mlp_fc"}) ==
        Names{"block\\d+\\.mlp\\..*", "block0\\..*"});
}

TEST_CASE("per_role: role_recipes lists every recipe a role can get", "[per_role]") {
  const Recipe r = parse_recipe_text(kMixed, "r.yaml");
  // fprop_input: only the first rule names it: without and with it.
  CHECK(role_recipes(r, Role::kFpropInput).size() == 2);
  // dgrad_grad_output: both rules, four subsets, all different.
  CHECK(role_recipes(r, Role::kDgradGradOutput).size() == 4);
}

TEST_CASE("per_role: a sweep parameter takes per_role values", "[per_role]") {
  const auto sweep = parse_sweep_text(R"(method: grid
workloads: [llama-xs]
seeds: [0]
base: {scaling: mxfp8}
parameters:
  per_role:
    values:
      - []
      - [{match: 'block\d+\.mlp\..*', scaling: nvfp4}]
)",
                                      "s.yaml");
  const auto runs = expand(sweep);
  std::size_t with_rules = 0;
  for (const auto& run : runs.runs) {
    if (!run.recipe.per_role.empty()) ++with_rules;
  }
  CHECK(with_rules == 1);
}
