// The lowering (recipes/lowering.hpp) as a golden table: every scaling (with its defaults), every
// MX scale mode and torchao version (for each MX element format), every NVFP4 mode with and
// without 2-D weights, times every operand of every GEMM, rendered one plan per
// line. Adding a recipe or changing what one quantizes with changes this table, in review.
// The recipes come from the name tables (accepted_scalings, accepted_mx_scale_modes, ...), so a new
// scaling, mode or version shows up here as missing rows until its rows are written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "recipes/lowering.hpp"
#include "recipes/recipe.hpp"

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

Recipe with_defaults(Scaling s) {
  Recipe r;
  r.scaling = s;
  r.fp8_format = default_fp8_format(s);
  r.power_2_scales = default_power_2_scales(s);
  r.gemm = default_gemm_accumulation(s);
  return r;
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
          Recipe r = with_defaults(s);
          r.nvfp4_mode = *parse_nvfp4_mode(mode);
          r.nvfp4_2d = two_d;
          if (two_d && r.nvfp4_mode == Nvfp4Mode::kTorchao) continue;  // refused: no torchao 2-D
          out.emplace_back(name + " " + mode + (two_d ? " 2d" : ""), r);
        }
      }
      // TE's NVFP4BlockScaling with every part on.
      Recipe te = with_defaults(s);
      te.nvfp4_2d = te.nvfp4_rht = te.nvfp4_stochastic_rounding = true;
      out.emplace_back(name + " te 2d rht sr", te);
      continue;
    }
    if (!is_mx(s)) {
      out.emplace_back(name, with_defaults(s));
      continue;
    }
    for (const std::string& mode : split(accepted_mx_scale_modes(), ',')) {
      Recipe r = with_defaults(s);
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
  }
  return out;
}

std::string lowering_table() {
  std::string text;
  for (const auto& [label, r] : recipes_of_the_table()) {
    for (const sc::Gemm gemm : {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
      const sc::GemmOperands o = sc::gemm_operands(gemm);
      for (const sc::Operand op : {o.a, o.b}) text += row(label, r, op, gemm) + "\n";
    }
  }
  return text;
}

// clang-format off
const char* const kGolden = R"(
delayed | input fprop -> delayed e4m3 allxall rowwise
delayed | weight fprop -> delayed e4m3 allxall rowwise
delayed | grad_output dgrad -> delayed e5m2 allxall rowwise
delayed | weight dgrad -> delayed e4m3 allxall columnwise
delayed | grad_output wgrad -> delayed e5m2 allxall columnwise
delayed | input wgrad -> delayed e4m3 allxall columnwise
current | input fprop -> current_te e4m3 allxall rowwise
current | weight fprop -> current_te e4m3 allxall rowwise
current | grad_output dgrad -> current_te e5m2 allxall rowwise
current | weight dgrad -> current_te e4m3 allxall columnwise
current | grad_output wgrad -> current_te e5m2 allxall columnwise
current | input wgrad -> current_te e4m3 allxall columnwise
tensorwise | input fprop -> tensorwise_torchao e4m3 allxall rowwise
tensorwise | weight fprop -> tensorwise_torchao e4m3 allxall rowwise
tensorwise | grad_output dgrad -> tensorwise_torchao e5m2 allxall rowwise
tensorwise | weight dgrad -> tensorwise_torchao e4m3 allxall columnwise
tensorwise | grad_output wgrad -> tensorwise_torchao e5m2 allxall columnwise
tensorwise | input wgrad -> tensorwise_torchao e4m3 allxall columnwise
rowwise | input fprop -> axiswise_torchao e4m3 1xall rowwise pow2
rowwise | weight fprop -> axiswise_torchao e4m3 1xall rowwise pow2
rowwise | grad_output dgrad -> axiswise_torchao e4m3 1xall rowwise pow2
rowwise | weight dgrad -> axiswise_torchao e4m3 allx1 columnwise pow2
rowwise | grad_output wgrad -> axiswise_torchao e4m3 allx1 columnwise pow2
rowwise | input wgrad -> axiswise_torchao e4m3 allx1 columnwise pow2
rowwise_with_gw_hp | input fprop -> axiswise_torchao e4m3 1xall rowwise pow2
rowwise_with_gw_hp | weight fprop -> axiswise_torchao e4m3 1xall rowwise pow2
rowwise_with_gw_hp | grad_output dgrad -> axiswise_torchao e4m3 1xall rowwise pow2
rowwise_with_gw_hp | weight dgrad -> tensorwise_torchao e4m3 allxall columnwise pow2
rowwise_with_gw_hp | grad_output wgrad -> high_precision
rowwise_with_gw_hp | input wgrad -> high_precision
block | input fprop -> block_te e4m3 1x128 rowwise pow2
block | weight fprop -> block_te e4m3 128x128 rowwise pow2
block | grad_output dgrad -> block_te e4m3 1x128 rowwise pow2
block | weight dgrad -> block_te e4m3 128x128 columnwise pow2
block | grad_output wgrad -> block_te e4m3 128x1 columnwise pow2
block | input wgrad -> block_te e4m3 128x1 columnwise pow2
mxfp8 te | input fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 te | weight fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 te | grad_output dgrad -> mx e5m2 1x32 rowwise te torchao-0.18
mxfp8 te | weight dgrad -> mx e4m3 32x1 columnwise te torchao-0.18
mxfp8 te | grad_output wgrad -> mx e5m2 32x1 columnwise te torchao-0.18
mxfp8 te | input wgrad -> mx e4m3 32x1 columnwise te torchao-0.18
mxfp8 floor torchao-0.18 | input fprop -> mx e4m3 1x32 rowwise floor torchao-0.18
mxfp8 floor torchao-0.18 | weight fprop -> mx e4m3 1x32 rowwise floor torchao-0.18
mxfp8 floor torchao-0.18 | grad_output dgrad -> mx e5m2 1x32 rowwise floor torchao-0.18
mxfp8 floor torchao-0.18 | weight dgrad -> mx e4m3 32x1 columnwise floor torchao-0.18
mxfp8 floor torchao-0.18 | grad_output wgrad -> mx e5m2 32x1 columnwise floor torchao-0.18
mxfp8 floor torchao-0.18 | input wgrad -> mx e4m3 32x1 columnwise floor torchao-0.18
mxfp8 floor torchao-main | input fprop -> mx e4m3 1x32 rowwise floor torchao-main
mxfp8 floor torchao-main | weight fprop -> mx e4m3 1x32 rowwise floor torchao-main
mxfp8 floor torchao-main | grad_output dgrad -> mx e5m2 1x32 rowwise floor torchao-main
mxfp8 floor torchao-main | weight dgrad -> mx e4m3 32x1 columnwise floor torchao-main
mxfp8 floor torchao-main | grad_output wgrad -> mx e5m2 32x1 columnwise floor torchao-main
mxfp8 floor torchao-main | input wgrad -> mx e4m3 32x1 columnwise floor torchao-main
mxfp8 ceil torchao-0.18 | input fprop -> mx e4m3 1x32 rowwise ceil torchao-0.18
mxfp8 ceil torchao-0.18 | weight fprop -> mx e4m3 1x32 rowwise ceil torchao-0.18
mxfp8 ceil torchao-0.18 | grad_output dgrad -> mx e5m2 1x32 rowwise ceil torchao-0.18
mxfp8 ceil torchao-0.18 | weight dgrad -> mx e4m3 32x1 columnwise ceil torchao-0.18
mxfp8 ceil torchao-0.18 | grad_output wgrad -> mx e5m2 32x1 columnwise ceil torchao-0.18
mxfp8 ceil torchao-0.18 | input wgrad -> mx e4m3 32x1 columnwise ceil torchao-0.18
mxfp8 ceil torchao-main | input fprop -> mx e4m3 1x32 rowwise ceil torchao-main
mxfp8 ceil torchao-main | weight fprop -> mx e4m3 1x32 rowwise ceil torchao-main
mxfp8 ceil torchao-main | grad_output dgrad -> mx e5m2 1x32 rowwise ceil torchao-main
mxfp8 ceil torchao-main | weight dgrad -> mx e4m3 32x1 columnwise ceil torchao-main
mxfp8 ceil torchao-main | grad_output wgrad -> mx e5m2 32x1 columnwise ceil torchao-main
mxfp8 ceil torchao-main | input wgrad -> mx e4m3 32x1 columnwise ceil torchao-main
mxfp8 even torchao-0.18 | input fprop -> mx e4m3 1x32 rowwise even torchao-0.18
mxfp8 even torchao-0.18 | weight fprop -> mx e4m3 1x32 rowwise even torchao-0.18
mxfp8 even torchao-0.18 | grad_output dgrad -> mx e5m2 1x32 rowwise even torchao-0.18
mxfp8 even torchao-0.18 | weight dgrad -> mx e4m3 32x1 columnwise even torchao-0.18
mxfp8 even torchao-0.18 | grad_output wgrad -> mx e5m2 32x1 columnwise even torchao-0.18
mxfp8 even torchao-0.18 | input wgrad -> mx e4m3 32x1 columnwise even torchao-0.18
mxfp8 even torchao-main | input fprop -> mx e4m3 1x32 rowwise even torchao-main
mxfp8 even torchao-main | weight fprop -> mx e4m3 1x32 rowwise even torchao-main
mxfp8 even torchao-main | grad_output dgrad -> mx e5m2 1x32 rowwise even torchao-main
mxfp8 even torchao-main | weight dgrad -> mx e4m3 32x1 columnwise even torchao-main
mxfp8 even torchao-main | grad_output wgrad -> mx e5m2 32x1 columnwise even torchao-main
mxfp8 even torchao-main | input wgrad -> mx e4m3 32x1 columnwise even torchao-main
mxfp8 rceil torchao-0.18 | input fprop -> mx e4m3 1x32 rowwise rceil torchao-0.18
mxfp8 rceil torchao-0.18 | weight fprop -> mx e4m3 1x32 rowwise rceil torchao-0.18
mxfp8 rceil torchao-0.18 | grad_output dgrad -> mx e5m2 1x32 rowwise rceil torchao-0.18
mxfp8 rceil torchao-0.18 | weight dgrad -> mx e4m3 32x1 columnwise rceil torchao-0.18
mxfp8 rceil torchao-0.18 | grad_output wgrad -> mx e5m2 32x1 columnwise rceil torchao-0.18
mxfp8 rceil torchao-0.18 | input wgrad -> mx e4m3 32x1 columnwise rceil torchao-0.18
mxfp8 rceil torchao-main | input fprop -> mx e4m3 1x32 rowwise rceil torchao-main
mxfp8 rceil torchao-main | weight fprop -> mx e4m3 1x32 rowwise rceil torchao-main
mxfp8 rceil torchao-main | grad_output dgrad -> mx e5m2 1x32 rowwise rceil torchao-main
mxfp8 rceil torchao-main | weight dgrad -> mx e4m3 32x1 columnwise rceil torchao-main
mxfp8 rceil torchao-main | grad_output wgrad -> mx e5m2 32x1 columnwise rceil torchao-main
mxfp8 rceil torchao-main | input wgrad -> mx e4m3 32x1 columnwise rceil torchao-main
mxfp4 te | input fprop -> mx e2m1 1x32 rowwise te torchao-0.18
mxfp4 te | weight fprop -> mx e2m1 1x32 rowwise te torchao-0.18
mxfp4 te | grad_output dgrad -> mx e2m1 1x32 rowwise te torchao-0.18
mxfp4 te | weight dgrad -> mx e2m1 32x1 columnwise te torchao-0.18
mxfp4 te | grad_output wgrad -> mx e2m1 32x1 columnwise te torchao-0.18
mxfp4 te | input wgrad -> mx e2m1 32x1 columnwise te torchao-0.18
mxfp4 floor torchao-0.18 | input fprop -> mx e2m1 1x32 rowwise floor torchao-0.18
mxfp4 floor torchao-0.18 | weight fprop -> mx e2m1 1x32 rowwise floor torchao-0.18
mxfp4 floor torchao-0.18 | grad_output dgrad -> mx e2m1 1x32 rowwise floor torchao-0.18
mxfp4 floor torchao-0.18 | weight dgrad -> mx e2m1 32x1 columnwise floor torchao-0.18
mxfp4 floor torchao-0.18 | grad_output wgrad -> mx e2m1 32x1 columnwise floor torchao-0.18
mxfp4 floor torchao-0.18 | input wgrad -> mx e2m1 32x1 columnwise floor torchao-0.18
mxfp4 floor torchao-main | input fprop -> mx e2m1 1x32 rowwise floor torchao-main
mxfp4 floor torchao-main | weight fprop -> mx e2m1 1x32 rowwise floor torchao-main
mxfp4 floor torchao-main | grad_output dgrad -> mx e2m1 1x32 rowwise floor torchao-main
mxfp4 floor torchao-main | weight dgrad -> mx e2m1 32x1 columnwise floor torchao-main
mxfp4 floor torchao-main | grad_output wgrad -> mx e2m1 32x1 columnwise floor torchao-main
mxfp4 floor torchao-main | input wgrad -> mx e2m1 32x1 columnwise floor torchao-main
mxfp4 ceil torchao-0.18 | input fprop -> mx e2m1 1x32 rowwise ceil torchao-0.18
mxfp4 ceil torchao-0.18 | weight fprop -> mx e2m1 1x32 rowwise ceil torchao-0.18
mxfp4 ceil torchao-0.18 | grad_output dgrad -> mx e2m1 1x32 rowwise ceil torchao-0.18
mxfp4 ceil torchao-0.18 | weight dgrad -> mx e2m1 32x1 columnwise ceil torchao-0.18
mxfp4 ceil torchao-0.18 | grad_output wgrad -> mx e2m1 32x1 columnwise ceil torchao-0.18
mxfp4 ceil torchao-0.18 | input wgrad -> mx e2m1 32x1 columnwise ceil torchao-0.18
mxfp4 ceil torchao-main | input fprop -> mx e2m1 1x32 rowwise ceil torchao-main
mxfp4 ceil torchao-main | weight fprop -> mx e2m1 1x32 rowwise ceil torchao-main
mxfp4 ceil torchao-main | grad_output dgrad -> mx e2m1 1x32 rowwise ceil torchao-main
mxfp4 ceil torchao-main | weight dgrad -> mx e2m1 32x1 columnwise ceil torchao-main
mxfp4 ceil torchao-main | grad_output wgrad -> mx e2m1 32x1 columnwise ceil torchao-main
mxfp4 ceil torchao-main | input wgrad -> mx e2m1 32x1 columnwise ceil torchao-main
mxfp4 even torchao-0.18 | input fprop -> mx e2m1 1x32 rowwise even torchao-0.18
mxfp4 even torchao-0.18 | weight fprop -> mx e2m1 1x32 rowwise even torchao-0.18
mxfp4 even torchao-0.18 | grad_output dgrad -> mx e2m1 1x32 rowwise even torchao-0.18
mxfp4 even torchao-0.18 | weight dgrad -> mx e2m1 32x1 columnwise even torchao-0.18
mxfp4 even torchao-0.18 | grad_output wgrad -> mx e2m1 32x1 columnwise even torchao-0.18
mxfp4 even torchao-0.18 | input wgrad -> mx e2m1 32x1 columnwise even torchao-0.18
mxfp4 even torchao-main | input fprop -> mx e2m1 1x32 rowwise even torchao-main
mxfp4 even torchao-main | weight fprop -> mx e2m1 1x32 rowwise even torchao-main
mxfp4 even torchao-main | grad_output dgrad -> mx e2m1 1x32 rowwise even torchao-main
mxfp4 even torchao-main | weight dgrad -> mx e2m1 32x1 columnwise even torchao-main
mxfp4 even torchao-main | grad_output wgrad -> mx e2m1 32x1 columnwise even torchao-main
mxfp4 even torchao-main | input wgrad -> mx e2m1 32x1 columnwise even torchao-main
mxfp4 rceil torchao-0.18 | input fprop -> mx e2m1 1x32 rowwise rceil torchao-0.18
mxfp4 rceil torchao-0.18 | weight fprop -> mx e2m1 1x32 rowwise rceil torchao-0.18
mxfp4 rceil torchao-0.18 | grad_output dgrad -> mx e2m1 1x32 rowwise rceil torchao-0.18
mxfp4 rceil torchao-0.18 | weight dgrad -> mx e2m1 32x1 columnwise rceil torchao-0.18
mxfp4 rceil torchao-0.18 | grad_output wgrad -> mx e2m1 32x1 columnwise rceil torchao-0.18
mxfp4 rceil torchao-0.18 | input wgrad -> mx e2m1 32x1 columnwise rceil torchao-0.18
mxfp4 rceil torchao-main | input fprop -> mx e2m1 1x32 rowwise rceil torchao-main
mxfp4 rceil torchao-main | weight fprop -> mx e2m1 1x32 rowwise rceil torchao-main
mxfp4 rceil torchao-main | grad_output dgrad -> mx e2m1 1x32 rowwise rceil torchao-main
mxfp4 rceil torchao-main | weight dgrad -> mx e2m1 32x1 columnwise rceil torchao-main
mxfp4 rceil torchao-main | grad_output wgrad -> mx e2m1 32x1 columnwise rceil torchao-main
mxfp4 rceil torchao-main | input wgrad -> mx e2m1 32x1 columnwise rceil torchao-main
mxfp6_e2m3 te | input fprop -> mx e2m3 1x32 rowwise te torchao-0.18
mxfp6_e2m3 te | weight fprop -> mx e2m3 1x32 rowwise te torchao-0.18
mxfp6_e2m3 te | grad_output dgrad -> mx e2m3 1x32 rowwise te torchao-0.18
mxfp6_e2m3 te | weight dgrad -> mx e2m3 32x1 columnwise te torchao-0.18
mxfp6_e2m3 te | grad_output wgrad -> mx e2m3 32x1 columnwise te torchao-0.18
mxfp6_e2m3 te | input wgrad -> mx e2m3 32x1 columnwise te torchao-0.18
mxfp6_e2m3 floor torchao-0.18 | input fprop -> mx e2m3 1x32 rowwise floor torchao-0.18
mxfp6_e2m3 floor torchao-0.18 | weight fprop -> mx e2m3 1x32 rowwise floor torchao-0.18
mxfp6_e2m3 floor torchao-0.18 | grad_output dgrad -> mx e2m3 1x32 rowwise floor torchao-0.18
mxfp6_e2m3 floor torchao-0.18 | weight dgrad -> mx e2m3 32x1 columnwise floor torchao-0.18
mxfp6_e2m3 floor torchao-0.18 | grad_output wgrad -> mx e2m3 32x1 columnwise floor torchao-0.18
mxfp6_e2m3 floor torchao-0.18 | input wgrad -> mx e2m3 32x1 columnwise floor torchao-0.18
mxfp6_e2m3 floor torchao-main | input fprop -> mx e2m3 1x32 rowwise floor torchao-main
mxfp6_e2m3 floor torchao-main | weight fprop -> mx e2m3 1x32 rowwise floor torchao-main
mxfp6_e2m3 floor torchao-main | grad_output dgrad -> mx e2m3 1x32 rowwise floor torchao-main
mxfp6_e2m3 floor torchao-main | weight dgrad -> mx e2m3 32x1 columnwise floor torchao-main
mxfp6_e2m3 floor torchao-main | grad_output wgrad -> mx e2m3 32x1 columnwise floor torchao-main
mxfp6_e2m3 floor torchao-main | input wgrad -> mx e2m3 32x1 columnwise floor torchao-main
mxfp6_e2m3 ceil torchao-0.18 | input fprop -> mx e2m3 1x32 rowwise ceil torchao-0.18
mxfp6_e2m3 ceil torchao-0.18 | weight fprop -> mx e2m3 1x32 rowwise ceil torchao-0.18
mxfp6_e2m3 ceil torchao-0.18 | grad_output dgrad -> mx e2m3 1x32 rowwise ceil torchao-0.18
mxfp6_e2m3 ceil torchao-0.18 | weight dgrad -> mx e2m3 32x1 columnwise ceil torchao-0.18
mxfp6_e2m3 ceil torchao-0.18 | grad_output wgrad -> mx e2m3 32x1 columnwise ceil torchao-0.18
mxfp6_e2m3 ceil torchao-0.18 | input wgrad -> mx e2m3 32x1 columnwise ceil torchao-0.18
mxfp6_e2m3 ceil torchao-main | input fprop -> mx e2m3 1x32 rowwise ceil torchao-main
mxfp6_e2m3 ceil torchao-main | weight fprop -> mx e2m3 1x32 rowwise ceil torchao-main
mxfp6_e2m3 ceil torchao-main | grad_output dgrad -> mx e2m3 1x32 rowwise ceil torchao-main
mxfp6_e2m3 ceil torchao-main | weight dgrad -> mx e2m3 32x1 columnwise ceil torchao-main
mxfp6_e2m3 ceil torchao-main | grad_output wgrad -> mx e2m3 32x1 columnwise ceil torchao-main
mxfp6_e2m3 ceil torchao-main | input wgrad -> mx e2m3 32x1 columnwise ceil torchao-main
mxfp6_e2m3 even torchao-0.18 | input fprop -> mx e2m3 1x32 rowwise even torchao-0.18
mxfp6_e2m3 even torchao-0.18 | weight fprop -> mx e2m3 1x32 rowwise even torchao-0.18
mxfp6_e2m3 even torchao-0.18 | grad_output dgrad -> mx e2m3 1x32 rowwise even torchao-0.18
mxfp6_e2m3 even torchao-0.18 | weight dgrad -> mx e2m3 32x1 columnwise even torchao-0.18
mxfp6_e2m3 even torchao-0.18 | grad_output wgrad -> mx e2m3 32x1 columnwise even torchao-0.18
mxfp6_e2m3 even torchao-0.18 | input wgrad -> mx e2m3 32x1 columnwise even torchao-0.18
mxfp6_e2m3 even torchao-main | input fprop -> mx e2m3 1x32 rowwise even torchao-main
mxfp6_e2m3 even torchao-main | weight fprop -> mx e2m3 1x32 rowwise even torchao-main
mxfp6_e2m3 even torchao-main | grad_output dgrad -> mx e2m3 1x32 rowwise even torchao-main
mxfp6_e2m3 even torchao-main | weight dgrad -> mx e2m3 32x1 columnwise even torchao-main
mxfp6_e2m3 even torchao-main | grad_output wgrad -> mx e2m3 32x1 columnwise even torchao-main
mxfp6_e2m3 even torchao-main | input wgrad -> mx e2m3 32x1 columnwise even torchao-main
mxfp6_e2m3 rceil torchao-0.18 | input fprop -> mx e2m3 1x32 rowwise rceil torchao-0.18
mxfp6_e2m3 rceil torchao-0.18 | weight fprop -> mx e2m3 1x32 rowwise rceil torchao-0.18
mxfp6_e2m3 rceil torchao-0.18 | grad_output dgrad -> mx e2m3 1x32 rowwise rceil torchao-0.18
mxfp6_e2m3 rceil torchao-0.18 | weight dgrad -> mx e2m3 32x1 columnwise rceil torchao-0.18
mxfp6_e2m3 rceil torchao-0.18 | grad_output wgrad -> mx e2m3 32x1 columnwise rceil torchao-0.18
mxfp6_e2m3 rceil torchao-0.18 | input wgrad -> mx e2m3 32x1 columnwise rceil torchao-0.18
mxfp6_e2m3 rceil torchao-main | input fprop -> mx e2m3 1x32 rowwise rceil torchao-main
mxfp6_e2m3 rceil torchao-main | weight fprop -> mx e2m3 1x32 rowwise rceil torchao-main
mxfp6_e2m3 rceil torchao-main | grad_output dgrad -> mx e2m3 1x32 rowwise rceil torchao-main
mxfp6_e2m3 rceil torchao-main | weight dgrad -> mx e2m3 32x1 columnwise rceil torchao-main
mxfp6_e2m3 rceil torchao-main | grad_output wgrad -> mx e2m3 32x1 columnwise rceil torchao-main
mxfp6_e2m3 rceil torchao-main | input wgrad -> mx e2m3 32x1 columnwise rceil torchao-main
mxfp6_e3m2 te | input fprop -> mx e3m2 1x32 rowwise te torchao-0.18
mxfp6_e3m2 te | weight fprop -> mx e3m2 1x32 rowwise te torchao-0.18
mxfp6_e3m2 te | grad_output dgrad -> mx e3m2 1x32 rowwise te torchao-0.18
mxfp6_e3m2 te | weight dgrad -> mx e3m2 32x1 columnwise te torchao-0.18
mxfp6_e3m2 te | grad_output wgrad -> mx e3m2 32x1 columnwise te torchao-0.18
mxfp6_e3m2 te | input wgrad -> mx e3m2 32x1 columnwise te torchao-0.18
mxfp6_e3m2 floor torchao-0.18 | input fprop -> mx e3m2 1x32 rowwise floor torchao-0.18
mxfp6_e3m2 floor torchao-0.18 | weight fprop -> mx e3m2 1x32 rowwise floor torchao-0.18
mxfp6_e3m2 floor torchao-0.18 | grad_output dgrad -> mx e3m2 1x32 rowwise floor torchao-0.18
mxfp6_e3m2 floor torchao-0.18 | weight dgrad -> mx e3m2 32x1 columnwise floor torchao-0.18
mxfp6_e3m2 floor torchao-0.18 | grad_output wgrad -> mx e3m2 32x1 columnwise floor torchao-0.18
mxfp6_e3m2 floor torchao-0.18 | input wgrad -> mx e3m2 32x1 columnwise floor torchao-0.18
mxfp6_e3m2 floor torchao-main | input fprop -> mx e3m2 1x32 rowwise floor torchao-main
mxfp6_e3m2 floor torchao-main | weight fprop -> mx e3m2 1x32 rowwise floor torchao-main
mxfp6_e3m2 floor torchao-main | grad_output dgrad -> mx e3m2 1x32 rowwise floor torchao-main
mxfp6_e3m2 floor torchao-main | weight dgrad -> mx e3m2 32x1 columnwise floor torchao-main
mxfp6_e3m2 floor torchao-main | grad_output wgrad -> mx e3m2 32x1 columnwise floor torchao-main
mxfp6_e3m2 floor torchao-main | input wgrad -> mx e3m2 32x1 columnwise floor torchao-main
mxfp6_e3m2 ceil torchao-0.18 | input fprop -> mx e3m2 1x32 rowwise ceil torchao-0.18
mxfp6_e3m2 ceil torchao-0.18 | weight fprop -> mx e3m2 1x32 rowwise ceil torchao-0.18
mxfp6_e3m2 ceil torchao-0.18 | grad_output dgrad -> mx e3m2 1x32 rowwise ceil torchao-0.18
mxfp6_e3m2 ceil torchao-0.18 | weight dgrad -> mx e3m2 32x1 columnwise ceil torchao-0.18
mxfp6_e3m2 ceil torchao-0.18 | grad_output wgrad -> mx e3m2 32x1 columnwise ceil torchao-0.18
mxfp6_e3m2 ceil torchao-0.18 | input wgrad -> mx e3m2 32x1 columnwise ceil torchao-0.18
mxfp6_e3m2 ceil torchao-main | input fprop -> mx e3m2 1x32 rowwise ceil torchao-main
mxfp6_e3m2 ceil torchao-main | weight fprop -> mx e3m2 1x32 rowwise ceil torchao-main
mxfp6_e3m2 ceil torchao-main | grad_output dgrad -> mx e3m2 1x32 rowwise ceil torchao-main
mxfp6_e3m2 ceil torchao-main | weight dgrad -> mx e3m2 32x1 columnwise ceil torchao-main
mxfp6_e3m2 ceil torchao-main | grad_output wgrad -> mx e3m2 32x1 columnwise ceil torchao-main
mxfp6_e3m2 ceil torchao-main | input wgrad -> mx e3m2 32x1 columnwise ceil torchao-main
mxfp6_e3m2 even torchao-0.18 | input fprop -> mx e3m2 1x32 rowwise even torchao-0.18
mxfp6_e3m2 even torchao-0.18 | weight fprop -> mx e3m2 1x32 rowwise even torchao-0.18
mxfp6_e3m2 even torchao-0.18 | grad_output dgrad -> mx e3m2 1x32 rowwise even torchao-0.18
mxfp6_e3m2 even torchao-0.18 | weight dgrad -> mx e3m2 32x1 columnwise even torchao-0.18
mxfp6_e3m2 even torchao-0.18 | grad_output wgrad -> mx e3m2 32x1 columnwise even torchao-0.18
mxfp6_e3m2 even torchao-0.18 | input wgrad -> mx e3m2 32x1 columnwise even torchao-0.18
mxfp6_e3m2 even torchao-main | input fprop -> mx e3m2 1x32 rowwise even torchao-main
mxfp6_e3m2 even torchao-main | weight fprop -> mx e3m2 1x32 rowwise even torchao-main
mxfp6_e3m2 even torchao-main | grad_output dgrad -> mx e3m2 1x32 rowwise even torchao-main
mxfp6_e3m2 even torchao-main | weight dgrad -> mx e3m2 32x1 columnwise even torchao-main
mxfp6_e3m2 even torchao-main | grad_output wgrad -> mx e3m2 32x1 columnwise even torchao-main
mxfp6_e3m2 even torchao-main | input wgrad -> mx e3m2 32x1 columnwise even torchao-main
mxfp6_e3m2 rceil torchao-0.18 | input fprop -> mx e3m2 1x32 rowwise rceil torchao-0.18
mxfp6_e3m2 rceil torchao-0.18 | weight fprop -> mx e3m2 1x32 rowwise rceil torchao-0.18
mxfp6_e3m2 rceil torchao-0.18 | grad_output dgrad -> mx e3m2 1x32 rowwise rceil torchao-0.18
mxfp6_e3m2 rceil torchao-0.18 | weight dgrad -> mx e3m2 32x1 columnwise rceil torchao-0.18
mxfp6_e3m2 rceil torchao-0.18 | grad_output wgrad -> mx e3m2 32x1 columnwise rceil torchao-0.18
mxfp6_e3m2 rceil torchao-0.18 | input wgrad -> mx e3m2 32x1 columnwise rceil torchao-0.18
mxfp6_e3m2 rceil torchao-main | input fprop -> mx e3m2 1x32 rowwise rceil torchao-main
mxfp6_e3m2 rceil torchao-main | weight fprop -> mx e3m2 1x32 rowwise rceil torchao-main
mxfp6_e3m2 rceil torchao-main | grad_output dgrad -> mx e3m2 1x32 rowwise rceil torchao-main
mxfp6_e3m2 rceil torchao-main | weight dgrad -> mx e3m2 32x1 columnwise rceil torchao-main
mxfp6_e3m2 rceil torchao-main | grad_output wgrad -> mx e3m2 32x1 columnwise rceil torchao-main
mxfp6_e3m2 rceil torchao-main | input wgrad -> mx e3m2 32x1 columnwise rceil torchao-main
nvfp4 te | input fprop -> nvfp4 e2m1 1x16 rowwise te
nvfp4 te | weight fprop -> nvfp4 e2m1 1x16 rowwise te
nvfp4 te | grad_output dgrad -> nvfp4 e2m1 1x16 rowwise te
nvfp4 te | weight dgrad -> nvfp4 e2m1 16x1 columnwise te
nvfp4 te | grad_output wgrad -> nvfp4 e2m1 16x1 columnwise te
nvfp4 te | input wgrad -> nvfp4 e2m1 16x1 columnwise te
nvfp4 te 2d | input fprop -> nvfp4 e2m1 1x16 rowwise te
nvfp4 te 2d | weight fprop -> nvfp4 e2m1 16x16 rowwise te
nvfp4 te 2d | grad_output dgrad -> nvfp4 e2m1 1x16 rowwise te
nvfp4 te 2d | weight dgrad -> nvfp4 e2m1 16x16 columnwise te
nvfp4 te 2d | grad_output wgrad -> nvfp4 e2m1 16x1 columnwise te
nvfp4 te 2d | input wgrad -> nvfp4 e2m1 16x1 columnwise te
nvfp4 torchao | input fprop -> nvfp4 e2m1 1x16 rowwise torchao
nvfp4 torchao | weight fprop -> nvfp4 e2m1 1x16 rowwise torchao
nvfp4 torchao | grad_output dgrad -> nvfp4 e2m1 1x16 rowwise torchao
nvfp4 torchao | weight dgrad -> nvfp4 e2m1 16x1 columnwise torchao
nvfp4 torchao | grad_output wgrad -> nvfp4 e2m1 16x1 columnwise torchao
nvfp4 torchao | input wgrad -> nvfp4 e2m1 16x1 columnwise torchao
nvfp4 te 2d rht sr | input fprop -> nvfp4 e2m1 1x16 rowwise te
nvfp4 te 2d rht sr | weight fprop -> nvfp4 e2m1 16x16 rowwise te
nvfp4 te 2d rht sr | grad_output dgrad -> nvfp4 e2m1 1x16 rowwise te sr
nvfp4 te 2d rht sr | weight dgrad -> nvfp4 e2m1 16x16 columnwise te
nvfp4 te 2d rht sr | grad_output wgrad -> nvfp4 e2m1 16x1 columnwise te rht sr
nvfp4 te 2d rht sr | input wgrad -> nvfp4 e2m1 16x1 columnwise te rht
)";
// clang-format on

TEST_CASE("lowering: every recipe's plan per operand and GEMM is the golden table", "[lowering]") {
  const std::vector<std::string> got = split(lowering_table(), '\n');
  const std::vector<std::string> want = split(kGolden, '\n');
  for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    const std::string g = i < got.size() ? got[i] : "(missing)";
    const std::string w = i < want.size() ? want[i] : "(no row)";
    INFO("row " << i << "\n  lowered: " << g << "\n  golden:  " << w);
    CHECK(g == w);
  }
  CHECK(got.size() == want.size());
}

TEST_CASE("lowering: non-default settings reach the plan", "[lowering]") {
  Recipe r = with_defaults(Scaling::current);
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
  Recipe r = with_defaults(Scaling::delayed);
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
  CHECK_FALSE(delayed_scaling(with_defaults(Scaling::current)).has_value());
  r.interval = 0;
  CHECK_THROWS_WITH(delayed_scaling(r), Catch::Contains("interval = 0"));
}

TEST_CASE("lowering: gemm_runs_fp8 follows the overrides and torchao's high-precision wgrad",
          "[lowering]") {
  Recipe r = with_defaults(Scaling::rowwise_with_gw_hp);
  CHECK(gemm_runs_fp8(r, sc::Gemm::kFprop));
  CHECK(gemm_runs_fp8(r, sc::Gemm::kDgrad));
  CHECK_FALSE(gemm_runs_fp8(r, sc::Gemm::kWgrad));
  r = with_defaults(Scaling::rowwise);
  CHECK(gemm_runs_fp8(r, sc::Gemm::kWgrad));
  r.override_linear_precision.dgrad = true;
  CHECK_FALSE(gemm_runs_fp8(r, sc::Gemm::kDgrad));
  CHECK(gemm_runs_fp8(r, sc::Gemm::kFprop));
}

// keep_high_precision: per Linear, the layer's plans. Patterns match whole names: "lm_head"
// keeps lm_head's wgrad but not lm_head_2's; "blocks\.0\..*" keeps every GEMM of block 0.
Recipe with_kept_layers(Scaling s) {
  Recipe r = with_defaults(s);
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
      const std::string label = std::string(name(s)) + " " + layer;
      for (const sc::Gemm gemm : {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad}) {
        const sc::GemmOperands o = sc::gemm_operands(gemm);
        for (const sc::Operand op : {o.a, o.b}) text += row(label, r, op, gemm, &layer) + "\n";
      }
    }
  }
  return text;
}

// clang-format off
const char* const kGoldenPerLayer = R"(
current blocks.0.mlp_fc | input fprop -> high_precision
current blocks.0.mlp_fc | weight fprop -> high_precision
current blocks.0.mlp_fc | grad_output dgrad -> high_precision
current blocks.0.mlp_fc | weight dgrad -> high_precision
current blocks.0.mlp_fc | grad_output wgrad -> high_precision
current blocks.0.mlp_fc | input wgrad -> high_precision
current blocks.1.mlp_fc | input fprop -> current_te e4m3 allxall rowwise
current blocks.1.mlp_fc | weight fprop -> current_te e4m3 allxall rowwise
current blocks.1.mlp_fc | grad_output dgrad -> high_precision
current blocks.1.mlp_fc | weight dgrad -> high_precision
current blocks.1.mlp_fc | grad_output wgrad -> current_te e5m2 allxall columnwise
current blocks.1.mlp_fc | input wgrad -> current_te e4m3 allxall columnwise
current lm_head | input fprop -> current_te e4m3 allxall rowwise
current lm_head | weight fprop -> current_te e4m3 allxall rowwise
current lm_head | grad_output dgrad -> current_te e5m2 allxall rowwise
current lm_head | weight dgrad -> current_te e4m3 allxall columnwise
current lm_head | grad_output wgrad -> high_precision
current lm_head | input wgrad -> high_precision
current lm_head_2 | input fprop -> current_te e4m3 allxall rowwise
current lm_head_2 | weight fprop -> current_te e4m3 allxall rowwise
current lm_head_2 | grad_output dgrad -> current_te e5m2 allxall rowwise
current lm_head_2 | weight dgrad -> current_te e4m3 allxall columnwise
current lm_head_2 | grad_output wgrad -> current_te e5m2 allxall columnwise
current lm_head_2 | input wgrad -> current_te e4m3 allxall columnwise
mxfp8 blocks.0.mlp_fc | input fprop -> high_precision
mxfp8 blocks.0.mlp_fc | weight fprop -> high_precision
mxfp8 blocks.0.mlp_fc | grad_output dgrad -> high_precision
mxfp8 blocks.0.mlp_fc | weight dgrad -> high_precision
mxfp8 blocks.0.mlp_fc | grad_output wgrad -> high_precision
mxfp8 blocks.0.mlp_fc | input wgrad -> high_precision
mxfp8 blocks.1.mlp_fc | input fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 blocks.1.mlp_fc | weight fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 blocks.1.mlp_fc | grad_output dgrad -> high_precision
mxfp8 blocks.1.mlp_fc | weight dgrad -> high_precision
mxfp8 blocks.1.mlp_fc | grad_output wgrad -> mx e5m2 32x1 columnwise te torchao-0.18
mxfp8 blocks.1.mlp_fc | input wgrad -> mx e4m3 32x1 columnwise te torchao-0.18
mxfp8 lm_head | input fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 lm_head | weight fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 lm_head | grad_output dgrad -> mx e5m2 1x32 rowwise te torchao-0.18
mxfp8 lm_head | weight dgrad -> mx e4m3 32x1 columnwise te torchao-0.18
mxfp8 lm_head | grad_output wgrad -> high_precision
mxfp8 lm_head | input wgrad -> high_precision
mxfp8 lm_head_2 | input fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 lm_head_2 | weight fprop -> mx e4m3 1x32 rowwise te torchao-0.18
mxfp8 lm_head_2 | grad_output dgrad -> mx e5m2 1x32 rowwise te torchao-0.18
mxfp8 lm_head_2 | weight dgrad -> mx e4m3 32x1 columnwise te torchao-0.18
mxfp8 lm_head_2 | grad_output wgrad -> mx e5m2 32x1 columnwise te torchao-0.18
mxfp8 lm_head_2 | input wgrad -> mx e4m3 32x1 columnwise te torchao-0.18
)";
// clang-format on

TEST_CASE("lowering: keep_high_precision's plans per layer are the golden table", "[lowering]") {
  const std::vector<std::string> got = split(per_layer_table(), '\n');
  const std::vector<std::string> want = split(kGoldenPerLayer, '\n');
  for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    const std::string g = i < got.size() ? got[i] : "(missing)";
    const std::string w = i < want.size() ? want[i] : "(no row)";
    INFO("row " << i << "\n  lowered: " << g << "\n  golden:  " << w);
    CHECK(g == w);
  }
  CHECK(got.size() == want.size());
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

}  // namespace
}  // namespace fp8lab::recipes
