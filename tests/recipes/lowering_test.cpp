// The lowering (recipes/lowering.hpp) as a golden table: every scaling (with its defaults), every
// MX scale mode and torchao version (for each MX element format), every NVFP4 mode with and
// without 2-D weights, times every operand of every GEMM, rendered one plan per
// line (tests/recipes/golden/lowering*.txt). Adding a recipe or changing what one quantizes with
// changes that table, in review.
// The recipes come from the name tables (accepted_scalings, accepted_mx_scale_modes, ...), so a new
// scaling, mode or version shows up here as missing rows until its rows are written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "recipes/canonical.hpp"
#include "recipes/default_recipe.hpp"
#include "recipes/lowering.hpp"
#include "recipes/recipe.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/role_rules.hpp"
#include "recipes/sweep.hpp"
#include "recipes/unmatched_keep.hpp"

namespace fp8lab::recipes {
namespace {

namespace sc = sim::scaling;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) {
    const auto first = item.find_first_not_of(' ');
    if (first != std::string::npos) out.push_back(item.substr(first));
  }
  return out;
}

std::string extent(std::int64_t n) { return n == 0 ? "all" : std::to_string(n); }

// One line: recipe | operand GEMM -> kind, format, blocks ("all" = the whole dimension), the axis
// along K, pow2, and for MX the mode and version (which kTe ignores).
std::string row(const std::string& label, const Recipe& r, sc::Operand op, sc::Gemm gemm,
                const std::string* layer = nullptr) {
  const sc::QuantizePlan p = layer ? plan(r, *layer, op, gemm) : plan(r, op, gemm);
  std::ostringstream line;
  line << label << " | " << sc::to_string(op) << " " << sc::to_string(gemm) << " -> "
       << sc::to_string(p.kind);
  if (p.kind == sc::QuantizeKind::kHighPrecision) return line.str();
  line << " " << sim::spec(p.format).name << " " << extent(p.block.rows) << "x"
       << extent(p.block.cols) << " " << sc::to_string(p.axis) << (p.pow2 ? " pow2" : "");
  if (p.kind == sc::QuantizeKind::kMx) {
    line << " " << sc::to_string(p.mx_mode) << " " << sc::to_string(p.torchao);
  }
  if (p.kind == sc::QuantizeKind::kNvfp4) line << " " << sc::to_string(p.nvfp4_mode);
  if (p.kind == sc::QuantizeKind::kStatic) line << " scale " << p.static_scale;
  if (p.rht) line << " rht";
  if (p.stochastic_rounding) line << " sr";
  return line.str();
}

// Every recipe of the table, labelled.
std::vector<std::pair<std::string, Recipe>> recipes_of_the_table() {
  std::vector<std::pair<std::string, Recipe>> out;
  for (const std::string& name : split(accepted_scalings(), ',')) {
    const Scaling s = *parse_scaling(name);
    if (s == Scaling::nvfp4) {
      for (const std::string& mode : split(accepted_nvfp4_modes(), ',')) {
        for (const bool two_d : {false, true}) {
          Recipe r = recipe_with_defaults(s);
          r.nvfp4_mode = *parse_nvfp4_mode(mode);
          r.nvfp4_2d = two_d;
          if (two_d && r.nvfp4_mode == Nvfp4Mode::kTorchao) continue;  // refused: no torchao 2-D
          out.emplace_back(name + " " + mode + (two_d ? " 2d" : ""), r);
        }
      }
      // TE's NVFP4BlockScaling with every part on.
      Recipe te = recipe_with_defaults(s);
      te.nvfp4_2d = te.nvfp4_rht = te.nvfp4_stochastic_rounding = true;
      out.emplace_back(name + " te 2d rht sr", te);
      // torchao's NVFP4TrainingConfig (recipes/configs/recipe-nvfp4-torchao-training.yaml).
      te.nvfp4_mode = Nvfp4Mode::kTorchaoTraining;
      out.emplace_back(name + " torchao_training 2d rht sr", te);
      continue;
    }
    if (s == Scaling::static_) {  // the default scale 1 (u-muP's), and one that is not
      Recipe r = recipe_with_defaults(s);
      out.emplace_back(name, r);
      r.static_scale = 0.0625;
      out.emplace_back(name + " 0.0625", r);
      continue;
    }
    if (!is_mx(s)) {
      out.emplace_back(name, recipe_with_defaults(s));
      continue;
    }
    for (const std::string& mode : split(accepted_mx_scale_modes(), ',')) {
      Recipe r = recipe_with_defaults(s);
      r.mx_scale_mode = *parse_mx_scale_mode(mode);
      if (!uses_torchao_version(r)) {
        out.emplace_back(name + " " + mode, r);
        continue;
      }
      for (const std::string& version : split(accepted_torchao_versions(), ',')) {
        r.torchao_version = *parse_torchao_version(version);
        out.emplace_back(name + " " + mode + " " + version, r);
      }
    }
    if (s == Scaling::mxfp4) {
      // Tseng et al.'s MXFP4 backward (docs/fp4.md): dither_scale and the 64-point RHT on the
      // dgrad and wgrad operands, the forward as the recipe says; then the RHT alone.
      Recipe tseng = recipe_with_defaults(s);
      tseng.mx_scale_mode = E8M0Mode::kFloor;
      tseng.mx_stochastic_rounding = tseng.mx_rht = true;
      out.emplace_back(name + " floor torchao-0.18 mx_sr mx_rht", tseng);
      Recipe rht_only = recipe_with_defaults(s);
      rht_only.mx_rht = true;
      out.emplace_back(name + " te mx_rht", rht_only);
    }
    if (s == Scaling::mxfp8) {
      // TE's MXFP8BlockScaling(enable_2d_quantization=True): the weight in 32 x 32 tiles in fprop
      // and dgrad, every other operand as without it.
      Recipe two_d = recipe_with_defaults(s);
      two_d.mx_2d = true;
      out.emplace_back(name + " te mx_2d", two_d);
    }
  }
  return out;
}

// The six rows of one recipe (for one layer when `layer` is given): every operand of every GEMM.
std::string plan_rows(const std::string& label, const Recipe& r,
                      const std::string* layer = nullptr) {
  std::string text;
  for (const sc::Gemm gemm : {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
    const sc::GemmOperands o = sc::gemm_operands(gemm);
    for (const sc::Operand op : {o.a, o.b}) text += row(label, r, op, gemm, layer) + "\n";
  }
  return text;
}

std::string lowering_table() {
  std::string text;
  for (const auto& [label, r] : recipes_of_the_table()) text += plan_rows(label, r);
  return text;
}

// The golden tables are files (tests/recipes/golden/), one plan per line; '#' starts a comment line.
std::vector<std::string> golden_rows(const std::string& file) {
  const std::string path = std::string(FP8LAB_SOURCE_DIR) + "/tests/recipes/golden/" + file;
  std::ifstream in(path);
  INFO("golden table " << path);
  REQUIRE(in.good());
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') rows.push_back(line);
  }
  return rows;
}

// Row by row, so that a failure shows the first rows that differ, lowered and golden.
void check_table(const std::string& lowered, const std::string& golden_file) {
  const std::vector<std::string> got = split(lowered, '\n');
  const std::vector<std::string> want = golden_rows(golden_file);
  for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    const std::string g = i < got.size() ? got[i] : "(missing)";
    const std::string w = i < want.size() ? want[i] : "(no row)";
    INFO(golden_file << " row " << i << "\n  lowered: " << g << "\n  golden:  " << w);
    CHECK(g == w);
  }
  CHECK(got.size() == want.size());
}

TEST_CASE("lowering: every recipe's plan per operand and GEMM is the golden table", "[lowering]") {
  check_table(lowering_table(), "lowering.txt");
}

TEST_CASE("lowering: non-default settings reach the plan", "[lowering]") {
  Recipe r = recipe_with_defaults(Scaling::current);
  r.fp8_format = Fp8Format::kE5M2;
  r.power_2_scales = true;
  const sc::QuantizePlan p = plan(r, sc::Operand::kWeight, sc::Gemm::kFprop);
  CHECK(p.format == sim::Format::E5M2);
  CHECK(p.pow2);
  r.fp8_format = Fp8Format::kE4M3;
  CHECK(plan(r, sc::Operand::kGradOutput, sc::Gemm::kDgrad).format == sim::Format::E4M3);
}

TEST_CASE("lowering: an operand a GEMM does not have is refused by name", "[lowering]") {
  CHECK_THROWS_WITH(plan(Recipe{}, sc::Operand::kGradOutput, sc::Gemm::kFprop),
                    Catch::Contains("grad_output") && Catch::Contains("fprop"));
}

TEST_CASE("lowering: the delayed update rule carries the recipe's settings unnarrowed",
          "[lowering]") {
  Recipe r = recipe_with_defaults(Scaling::delayed);
  r.interval = 3;
  r.amax_history_len = 16;
  r.amax_compute_algo = AmaxComputeAlgo::kMax;
  r.margin = (std::int64_t{1} << 32) + 1;  // truncated to int this would be margin 1
  const sc::QuantizePlan p = plan(r, sc::Operand::kInput, sc::Gemm::kFprop);
  REQUIRE(p.kind == sc::QuantizeKind::kDelayed);
  CHECK(p.delayed.margin == r.margin);
  CHECK(p.delayed.amax_history_len == 16);
  CHECK(p.delayed.amax_compute_algo == AmaxComputeAlgo::kMax);
  // The interval rule: updates 0, 3, 6 recompute; the others keep the scale.
  CHECK(p.delayed.recomputes_scale(0));
  CHECK_FALSE(p.delayed.recomputes_scale(1));
  CHECK_FALSE(p.delayed.recomputes_scale(2));
  CHECK(p.delayed.recomputes_scale(6));
  // 448 * 2^-(2^32 + 1) is 0 in fp32 (margin 1 would give 224).
  CHECK(sc::delayed_scaled_max(p.delayed, sim::Format::E4M3) == 0.0f);
  r.margin = 1;
  CHECK(sc::delayed_scaled_max(plan(r, sc::Operand::kInput, sc::Gemm::kFprop).delayed,
                               sim::Format::E4M3) == 224.0f);
  CHECK_FALSE(delayed_scaling(recipe_with_defaults(Scaling::current)).has_value());
  r.interval = 0;
  CHECK_THROWS_WITH(delayed_scaling(r), Catch::Contains("interval = 0"));
}

TEST_CASE("lowering: gemm_runs_fp8 follows the overrides and torchao's high-precision wgrad",
          "[lowering]") {
  Recipe r = recipe_with_defaults(Scaling::rowwise_with_gw_hp);
  CHECK(gemm_runs_fp8(r, sc::Gemm::kFprop));
  CHECK(gemm_runs_fp8(r, sc::Gemm::kDgrad));
  CHECK_FALSE(gemm_runs_fp8(r, sc::Gemm::kWgrad));
  r = recipe_with_defaults(Scaling::rowwise);
  CHECK(gemm_runs_fp8(r, sc::Gemm::kWgrad));
  r.override_linear_precision.dgrad = true;
  CHECK_FALSE(gemm_runs_fp8(r, sc::Gemm::kDgrad));
  CHECK(gemm_runs_fp8(r, sc::Gemm::kFprop));
}

// backward_override (recipe.hpp): how each GEMM of a Linear runs, per scaling TE gives the field,
// for each spelling and for override_linear_precision [false, true, true]; a layer that
// keep_high_precision keeps in dgrad reads its unquantized operands there.
std::string gemm_mode(const Recipe& r, const std::string& layer, sc::Gemm gemm) {
  if (gemm_runs_fp8(r, layer, gemm)) return "fp8";
  return runs_dequantized(r, layer, gemm) ? "high precision, the fprop codes dequantized"
                                          : "high precision, unquantized operands";
}

std::string backward_override_table() {
  std::string text;
  for (const Scaling s : {Scaling::current, Scaling::block, Scaling::mxfp8, Scaling::nvfp4}) {
    for (const std::string spelling :
         {"none", "high_precision", "dequantized", "override [false, true, true]"}) {
      Recipe r = recipe_with_defaults(s);
      if (spelling.starts_with("override")) {
        r.override_linear_precision = {false, true, true};
      } else {
        r.backward_override = *parse_backward_override(spelling);
      }
      r.keep_high_precision.dgrad = {"lm_head"};
      for (const std::string layer : {"blocks.0.mlp_fc", "lm_head"}) {
        for (const sc::Gemm gemm : {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
          text += std::string(name(s)) + " " + spelling + " " + layer + " | " +
                  sc::to_string(gemm) + " -> " + gemm_mode(r, layer, gemm) + "\n";
        }
      }
    }
  }
  return text;
}

TEST_CASE("lowering: backward_override's GEMMs per layer are the golden table",
          "[lowering][backward_override]") {
  check_table(backward_override_table(), "lowering_backward_override.txt");
}

TEST_CASE("lowering: backward_override high_precision lowers as override_linear_precision "
          "[false, true, true], and canonical writes it so",
          "[lowering][backward_override]") {
  for (const Scaling s : {Scaling::current, Scaling::block, Scaling::mxfp8, Scaling::nvfp4,
                          Scaling::tensorwise, Scaling::mxfp4}) {
    INFO(name(s));
    Recipe spelled = recipe_with_defaults(s);
    spelled.backward_override = BackwardOverride::kHighPrecision;
    Recipe overridden = recipe_with_defaults(s);
    overridden.override_linear_precision = {false, true, true};
    for (const sc::Gemm gemm : {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
      CHECK(gemm_runs_fp8(spelled, "x", gemm) == gemm_runs_fp8(overridden, "x", gemm));
      CHECK_FALSE(runs_dequantized(spelled, "x", gemm));
      const sc::GemmOperands o = sc::gemm_operands(gemm);
      for (const sc::Operand op : {o.a, o.b})
        CHECK(plan(spelled, op, gemm) == plan(overridden, op, gemm));
    }
    CHECK(canonicalize(spelled).recipe == canonicalize(overridden).recipe);
    CHECK(run_id(canonicalize(spelled).recipe) == run_id(canonicalize(overridden).recipe));
    CHECK(canonical_string(canonicalize(spelled).recipe).find("backward_override") ==
          std::string::npos);
  }
  Recipe dequantized = recipe_with_defaults(Scaling::mxfp8);
  dequantized.backward_override = BackwardOverride::kDequantized;
  const Canonical c = canonicalize(dequantized);
  CHECK(c.recipe.backward_override == BackwardOverride::kDequantized);
  CHECK(canonical_string(c.recipe).find(";backward_override=dequantized") != std::string::npos);
  CHECK(c.recipe.fp8_format == Fp8Format::kE4M3);  // no gradient is quantized: HYBRID is E4M3
  CHECK(c.recipe.gemm.dgrad == Accumulation::kFp32Seq);
  // With fprop in high precision there are no codes: every GEMM unquantized (rule 1).
  dequantized.override_linear_precision.fprop = true;
  CHECK(canonicalize(dequantized).recipe.override_linear_precision.all());
}

TEST_CASE("mx_2d: in the canonical string only when true; canonical drops it outside mxfp8",
          "[lowering][mx_2d]") {
  Recipe r = recipe_with_defaults(Scaling::mxfp8);
  const std::string plain = canonical_string(r);
  CHECK(plain.find("mx_2d") == std::string::npos);
  r.mx_2d = true;
  CHECK(canonical_string(r).find(";mx_2d=true") != std::string::npos);
  CHECK(run_id(r) != run_id(recipe_with_defaults(Scaling::mxfp8)));
  CHECK(canonicalize(r).recipe.mx_2d);
  Recipe mx4 = recipe_with_defaults(Scaling::mxfp4);
  mx4.mx_2d = true;
  const Canonical c = canonicalize(mx4);
  CHECK_FALSE(c.recipe.mx_2d);
  CHECK(c.reasons == std::vector<std::string>{
                         "mx_2d is TE's MXFP8BlockScaling.enable_2d_quantization, mxfp8 only, "
                         "not mxfp4"});
  // mxfp4's own plans: no 32 x 32 weight (the lowering reads mx_2d for mxfp8 only).
  CHECK(plan(mx4, sc::Operand::kWeight, sc::Gemm::kFprop).block == sc::BlockShape{1, 32});
}

// keep_high_precision: per Linear, the layer's plans. Patterns match whole names: "lm_head"
// keeps lm_head's wgrad but not lm_head_2's; "blocks\.0\..*" keeps every GEMM of block 0.
Recipe with_kept_layers(Scaling s) {
  Recipe r = recipe_with_defaults(s);
  r.keep_high_precision.layers = {"blocks\\.0\\..*"};
  r.keep_high_precision.wgrad = {"lm_head"};
  r.keep_high_precision.dgrad = {".*mlp_fc"};
  return r;
}

std::string per_layer_table() {
  std::string text;
  for (const Scaling s : {Scaling::current, Scaling::mxfp8}) {
    const Recipe r = with_kept_layers(s);
    for (const std::string layer : {"blocks.0.mlp_fc", "blocks.1.mlp_fc", "lm_head", "lm_head_2"}) {
      text += plan_rows(std::string(name(s)) + " " + layer, r, &layer);
    }
  }
  return text;
}

TEST_CASE("lowering: keep_high_precision's plans per layer are the golden table", "[lowering]") {
  check_table(per_layer_table(), "lowering_per_layer.txt");
}

TEST_CASE("lowering: without keep_high_precision a layer's plan is the recipe's", "[lowering]") {
  for (const auto& [label, r] : recipes_of_the_table()) {
    for (const sc::Gemm gemm : {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
      INFO(label << " " << sc::to_string(gemm));
      const sc::GemmOperands o = sc::gemm_operands(gemm);
      CHECK(plan(r, "blocks.0.mlp_fc", o.a, gemm) == plan(r, o.a, gemm));
      CHECK(gemm_runs_fp8(r, "blocks.0.mlp_fc", gemm) == gemm_runs_fp8(r, gemm));
    }
  }
}

TEST_CASE("lowering: gemm_runs_fp8 per layer follows keep_high_precision", "[lowering]") {
  const Recipe r = with_kept_layers(Scaling::rowwise_with_gw_hp);
  CHECK_FALSE(gemm_runs_fp8(r, "blocks.0.attn", sc::Gemm::kFprop));
  CHECK(gemm_runs_fp8(r, "blocks.1.mlp_fc", sc::Gemm::kFprop));
  CHECK_FALSE(gemm_runs_fp8(r, "blocks.1.mlp_fc", sc::Gemm::kDgrad));
  CHECK_FALSE(gemm_runs_fp8(r, "blocks.1.attn", sc::Gemm::kWgrad));  // the recipe's own wgrad
  CHECK(gemm_runs_fp8(r, "lm_head_2", sc::Gemm::kDgrad));
  CHECK(keeps_high_precision(r, "lm_head", sc::Gemm::kWgrad));
  CHECK_FALSE(keeps_high_precision(r, "lm_head", sc::Gemm::kFprop));
}

TEST_CASE("lowering: unmatched_keep_patterns names the patterns no Linear matches", "[lowering]") {
  const Recipe r = with_kept_layers(Scaling::current);  // layers blocks\.0\..*, dgrad .*mlp_fc
  using Names = std::vector<std::string>;
  CHECK(unmatched_keep_patterns(r, {"blocks.0.attn", "blocks.1.mlp_fc", "lm_head"}).empty());
  // llama's names: block0.q_proj matches none of blocks\.0\..* ; no lm_head Linear either.
  CHECK(unmatched_keep_patterns(r, {"block0.q_proj", "block0.mlp_fc"}) ==
        Names{"blocks\\.0\\..*", "lm_head"});
  CHECK(unmatched_keep_patterns(r, {}) == Names{"blocks\\.0\\..*", ".*mlp_fc", "lm_head"});
  CHECK(unmatched_keep_patterns(recipe_with_defaults(Scaling::current), {"x"}).empty());
}

// per_role (recipes/role_rules.hpp): the example recipe files' plans for llama's Linear names, per
// layer and role, lowered through the same plan() as every other row.
std::string per_role_table() {
  std::string text;
  for (const std::string file : {"recipe-per-role-nvfp4-mlp-mxfp8-attention.yaml",
                                 "recipe-per-role-te-custom-mxfp8-fwd-nvfp4-bwd.yaml",
                                 "recipe-per-role-torchao-nvfp4-ffn-mxfp8-attention.yaml"}) {
    const Recipe r = read_recipe_file(std::string(FP8LAB_SOURCE_DIR) + "/recipes/configs/" + file);
    for (const std::string layer : {"block0.attention.q_proj", "block0.attention.o_proj",
                                    "block0.mlp.gate_proj", "block1.mlp.down_proj"}) {
      text +=
          plan_rows(file.substr(std::string("recipe-per-role-").size()) + " " + layer, r, &layer);
    }
  }
  return text;
}

TEST_CASE("lowering: per_role recipes' plans per layer and role are the golden table",
          "[lowering][per_role]") {
  check_table(per_role_table(), "lowering_per_role.txt");
}

TEST_CASE("lowering: a per_role rule is the plan of the rule's recipe on its roles only",
          "[lowering][per_role]") {
  Recipe r = recipe_with_defaults(Scaling::mxfp8);
  RoleRule rule;
  rule.match = {"block\\d+\\.mlp\\..*"};
  rule.roles = static_cast<std::uint8_t>(role_bit(Role::kDgradGradOutput) |
                                         role_bit(Role::kWgradGradOutput));
  rule.mx_scale_mode = E8M0Mode::kRceil;
  r.per_role = {rule};
  Recipe rceil = recipe_with_defaults(Scaling::mxfp8);
  rceil.mx_scale_mode = E8M0Mode::kRceil;
  for (const Role role : kRoles) {
    const sc::Operand op = operand_of(role);
    const sc::Gemm gemm = gemm_of(role);
    const bool named = role == Role::kDgradGradOutput || role == Role::kWgradGradOutput;
    INFO(name(role));
    CHECK(plan(r, "block0.mlp.up_proj", op, gemm) ==
          plan(named ? rceil : recipe_with_defaults(Scaling::mxfp8), op, gemm));
    CHECK(plan(r, "block0.attention.q_proj", op, gemm) ==
          plan(recipe_with_defaults(Scaling::mxfp8), op, gemm));
    // A backend's state holds for_layer's recipe: its plans without the name are the same.
    CHECK(plan(for_layer(r, "block0.mlp.up_proj"), op, gemm) ==
          plan(r, "block0.mlp.up_proj", op, gemm));
  }
  // Without a name a pattern cannot be decided.
  CHECK_THROWS_WITH(plan(r, sc::Operand::kInput, sc::Gemm::kFprop),
                    Catch::Contains("per_role[0]") && Catch::Contains("Linear's name"));
}

TEST_CASE("lowering: per_role GEMMs whose operands disagree are refused, naming the Linear",
          "[lowering][per_role]") {
  // current (hopper models) on fprop's input, nvfp4 (blackwell_block) on its weight.
  Recipe r = recipe_with_defaults(Scaling::current);
  RoleRule rule;
  rule.roles = role_bit(Role::kFpropWeight);
  rule.scaling = Scaling::nvfp4;
  r.per_role = {rule};
  CHECK_THROWS_WITH(gemm_accumulation(r, "block0.mlp.up_proj"),
                    Catch::Contains("fprop GEMM of 'block0.mlp.up_proj'") &&
                        Catch::Contains("current") && Catch::Contains("nvfp4"));
  // rowwise_with_gw_hp keeps wgrad high: on one wgrad operand only, one is quantized.
  Recipe half = recipe_with_defaults(Scaling::rowwise);
  RoleRule gw;
  gw.roles = role_bit(Role::kWgradInput);
  gw.scaling = Scaling::rowwise_with_gw_hp;
  half.per_role = {gw};
  CHECK_THROWS_WITH(gemm_runs_fp8(half, "x", sc::Gemm::kWgrad),
                    Catch::Contains("wgrad GEMM of 'x'"));
  CHECK(gemm_runs_fp8(half, "x", sc::Gemm::kFprop));
  // Both wgrad operands under rowwise_with_gw_hp: the GEMM runs high, consistently.
  gw.roles =
      static_cast<std::uint8_t>(role_bit(Role::kWgradInput) | role_bit(Role::kWgradGradOutput));
  half.per_role = {gw};
  CHECK_FALSE(gemm_runs_fp8(half, "x", sc::Gemm::kWgrad));
}

TEST_CASE("L10's sweep file: Tseng et al.'s four arms, SR and RHT on the backward operands only",
          "[recipes][lowering]") {
  const auto e =
      expand(read_sweep(FP8LAB_SOURCE_DIR "/recipes/sweeps/literature/L10-mxfp4-sr-rht.yaml"));
  REQUIRE(e.runs.size() == 12);  // 4 arms x 3 seeds
  int arms[2][2] = {{0, 0}, {0, 0}};
  for (const auto& run : e.runs) {
    const Recipe& r = run.recipe;
    REQUIRE(r.scaling == Scaling::mxfp4);
    CHECK(r.mx_scale_mode == E8M0Mode::kFloor);
    CHECK(r.override_linear_precision == OverrideLinearPrecision{true, false, false});
    ++arms[r.mx_stochastic_rounding ? 1 : 0][r.mx_rht ? 1 : 0];
    for (const sc::Gemm gemm : {sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
      const sc::GemmOperands o = sc::gemm_operands(gemm);
      for (const sc::Operand op : {o.a, o.b}) {
        const sc::QuantizePlan p = plan(r, op, gemm);
        CHECK(p.stochastic_rounding == r.mx_stochastic_rounding);
        CHECK(p.rht == r.mx_rht);
      }
    }
    CHECK(!gemm_runs_fp8(r, sc::Gemm::kFprop));
  }
  CHECK(arms[0][0] == 3);
  CHECK(arms[0][1] == 3);
  CHECK(arms[1][0] == 3);
  CHECK(arms[1][1] == 3);
}

}  // namespace
}  // namespace fp8lab::recipes
