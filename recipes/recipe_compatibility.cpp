// compatibility(const Recipe&): what the peer library would run for an fp8lab recipe.
#include <fmt/format.h>

#include "recipes/compatibility.hpp"

namespace fp8lab::recipes {
namespace {

// The recipe as accelerate's TERecipeKwargs would carry it (delayed and mxfp8 only).
AccelerateFp8Settings as_te_recipe_kwargs(const Recipe& r) {
  AccelerateFp8Settings s;
  s.origin = "recipe";
  s.backend = Fp8Backend::TE;
  const auto given = SettingSource::config_file;
  s.fp8_format = {r.fp8_format, given, {}};
  s.use_autocast_during_eval = {r.use_autocast_during_eval, given, {}};
  s.override_linear_precision = {r.override_linear_precision, given, {}};
  s.use_mxfp8_block_scaling = {r.scaling == Scaling::mxfp8, given, {}};
  if (r.scaling == Scaling::delayed) {
    s.margin = {r.margin, given, {}};
    s.interval = {r.interval, given, {}};
    s.amax_history_len = {r.amax_history_len, given, {}};
    s.amax_compute_algo = {r.amax_compute_algo, given, {}};
  }
  return s;
}

bool is_hardware_accumulation(Accumulation a) {
  return a == Accumulation::kHopperFastAccum || a == Accumulation::kHopperSplitAccumulator;
}

// GEMM accumulation: TE/torchao choose between split (promoted) and fast accumulation only; the
// reference models fp32_seq and exact exist in fp8lab alone (docs/numerics.md §3).
void gemm_quirks(const Recipe& asked, Compatibility& c, bool peer_can_choose) {
  const GemmAccumulation peer_default = default_gemm_accumulation(asked.scaling);
  const auto check = [&](const char* gemm, Accumulation want, Accumulation peer,
                         Accumulation GemmAccumulation::*member) {
    if (want == peer) return;
    if (peer_can_choose && is_hardware_accumulation(want)) return;
    c.te_effective.gemm.*member = peer;
    c.quirks.push_back({fmt::format("gemm.{}", gemm), std::string(name(want)),
                        std::string(name(peer)),
                        is_hardware_accumulation(want)
                            ? fmt::format("{} has no per-GEMM accumulation setting; its modules "
                                          "use their defaults",
                                          c.te_recipe_class)
                            : "a model of fp8lab's emulator; the GPU library runs its cuBLAS "
                              "accumulation",
                        "te-accelerate.md §6, docs/numerics.md §3"});
  };
  check("fprop", asked.gemm.fprop, peer_default.fprop, &GemmAccumulation::fprop);
  check("dgrad", asked.gemm.dgrad, peer_default.dgrad, &GemmAccumulation::dgrad);
  check("wgrad", asked.gemm.wgrad, peer_default.wgrad, &GemmAccumulation::wgrad);
}

void te_direct_quirks(const Recipe& r, Compatibility& c) {
  if (r.fp8_format == Fp8Format::kE5M2) {
    c.runnable = false;
    c.quirks.push_back(
        {"fp8_format", "E5M2", "",
         fmt::format("{} asserts \"Pure E5M2 training is not supported.\"", c.te_recipe_class),
         "te-accelerate.md §5.2, §5.3"});
  }
  if (!r.override_linear_precision.none()) {
    c.te_effective.override_linear_precision = {};
    c.quirks.push_back({"override_linear_precision", "not all false", "(false, false, false)",
                        "TE 2.x recipes have no per-GEMM high-precision override",
                        "te-accelerate.md §2.1"});
  }
  if (r.scaling == Scaling::block) {
    const GemmAccumulation split = default_gemm_accumulation(Scaling::block);
    if (!(r.gemm == split) && is_hardware_accumulation(r.gemm.fprop) &&
        is_hardware_accumulation(r.gemm.dgrad) && is_hardware_accumulation(r.gemm.wgrad)) {
      c.runnable = false;
      c.quirks.push_back({"gemm", "fast accumulation somewhere", "",
                          "Float8BlockScaling asserts use_split_accumulator on all three GEMMs",
                          "te-accelerate.md §5.3"});
    }
    if (!r.power_2_scales) {
      c.quirks.push_back({"power_2_scales", "false",
                          "false only with "
                          "NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1",
                          "TE reads this choice from the environment when the recipe is built",
                          "te-accelerate.md §5.3"});
    }
  } else if (r.power_2_scales) {
    c.quirks.push_back({"power_2_scales", "true",
                        "true only with NVTE_FP8_CURRENT_SCALING_POWER_2_SCALES=1",
                        "TE reads this choice from the environment when the recipe is built",
                        "te-accelerate.md §5.2"});
  }
}

// keep_high_precision and autoswitch (issue 18) are fp8lab's own fields: no accelerate kwarg
// carries them. TE keeps layers and GEMMs in high precision through its debug features
// (DisableFP8Layer / DisableFP8GEMM sections selected by layer_name_regex_pattern), torchao whole
// layers through module_filter_fn: the peer's run keeps them. Neither has a rule that switches a
// GEMM on a threshold: the peer's run has no autoswitch.
void diagnostics_quirks(const Recipe& r, Compatibility& c) {
  c.te_effective.keep_high_precision = r.keep_high_precision;
  c.te_effective.per_role = r.per_role;
  if (!r.per_role.empty()) {
    // role_rules.hpp: no accelerate kwarg carries a quantizer per module and role; TE runs it as a
    // CustomRecipe (transformer_engine/common/recipe/__init__.py) whose qfactory reads
    // QuantizerRole's module name and tensor type, torchao as one quantize_ call per module group.
    c.quirks.push_back(
        {"per_role", fmt::format("{} rule{}", r.per_role.size(), r.per_role.size() == 1 ? "" : "s"),
         "CustomRecipe",
         "accelerate has no kwarg for it: TE runs it as CustomRecipe(qfactory=...), "
         "a quantizer per QuantizerRole (module name, tensor type); torchao as "
         "quantize_ with a filter_fn per module group",
         "recipes/README.md, per_role"});
  }
  if (!r.autoswitch.enabled) return;
  c.te_effective.autoswitch = Autoswitch{};
  c.quirks.push_back({"autoswitch", "enabled", "off",
                      "TE's debug features (LogTensorStats, LogFp8TensorStats, DisableFP8GEMM, "
                      "DisableFP8Layer, PerTensorScaling, FakeQuant) and torchao have no rule that "
                      "moves a GEMM to high precision on a threshold",
                      "TE user guide, debug/3_api_features"});
}

// LayerNorm and activation quantization (Recipe::norm_affine_precision, activation_precision):
// TE and torchao quantize Linear GEMM operands only; microxcaling is the peer that rounds these.
void beyond_gemm_quirks(const Recipe& r, Compatibility& c) {
  const auto check = [&](const char* field, ElementwisePrecision asked,
                         ElementwisePrecision Recipe::*member, const char* what) {
    if (asked == ElementwisePrecision::kHigh) return;
    c.te_effective.*member = ElementwisePrecision::kHigh;
    c.quirks.push_back({field, std::string(name(asked)), "high",
                        fmt::format("{} quantizes only the GEMM operands of Linear layers; {} stay "
                                    "in the model's precision (microsoft/microxcaling rounds them "
                                    "to bfloat16, as Su et al. 2025 trained)",
                                    c.runner, what),
                        "fp8-training-literature.md L3"});
  };
  check("norm_affine_precision", r.norm_affine_precision, &Recipe::norm_affine_precision,
        "LayerNorm weight and bias");
  check("activation_precision", r.activation_precision, &Recipe::activation_precision,
        "activation functions");
}

// What the peer runs for the recipe's GEMMs.
Compatibility compatibility_of_gemms(const Recipe& r) {
  Compatibility c;
  if (r.scaling == Scaling::delayed || r.scaling == Scaling::mxfp8) {
    c = compatibility(as_te_recipe_kwargs(r));
    c.runner = "accelerate TERecipeKwargs + Transformer Engine";
    const Recipe te_from_kwargs = c.te_effective;
    c.asked = r;
    c.te_effective = te_from_kwargs;  // canonical: TE has no torchao version (field_changes)
    if (uses_torchao_version(r)) {
      c.quirks.push_back(
          {"mx_scale_mode", std::string(name(r.mx_scale_mode)), "te",
           fmt::format("TE rounds the E8M0 scale up from RN(amax * RN(1/fp8_max)); {} is a "
                       "torchao choice, computed as {}'s to_mx (torchao_version: {}{})",
                       name(r.mx_scale_mode),
                       r.torchao_version == TorchaoVersion::kV0_18 ? "torchao v0.18.0"
                                                                   : "torchao main",
                       name(r.torchao_version),
                       r.torchao_version == TorchaoVersion::kV0_18 ? ", the pinned release" : ""),
           r.torchao_version == TorchaoVersion::kV0_18
               ? "te-accelerate.md §4.3, torchao-mx.md §4.3"
               : "te-accelerate.md §4.3, torchao-mx.md §4.2"});
    }
    gemm_quirks(r, c, false);
    return c;
  }
  c.asked = r;
  c.te_effective = r;
  if (const auto element = subbyte_element_format(r.scaling)) {
    // Below 8 bits (docs/fp4.md): each mode names the peer whose bytes it reproduces.
    const bool te = r.scaling == Scaling::nvfp4 ? r.nvfp4_mode == Nvfp4Mode::kTe
                                                : r.mx_scale_mode == E8M0Mode::kTe;
    if (r.scaling == Scaling::nvfp4) {
      c.runner = te ? "Transformer Engine" : "torchao";
      c.te_recipe_class =
          te ? fmt::format("NVFP4BlockScaling(disable_rht={}, disable_stochastic_rounding={}, "
                           "disable_2d_quantization={})",
                           r.nvfp4_rht ? "False" : "True",
                           r.nvfp4_stochastic_rounding ? "False" : "True",
                           r.nvfp4_2d ? "False" : "True")
          : r.nvfp4_mode == Nvfp4Mode::kTorchaoTraining
              ? "quantize_(model, NVFP4TrainingConfig(rht_sign_vector=TE's vector))"
              : "NVFP4Tensor.to_nvfp4(per_tensor_scale=per_tensor_amax_to_scale(amax))";
      c.quirks.push_back(
          {"nvfp4_mode", std::string(name(r.nvfp4_mode)), "",
           te ? "TE's kernels' scale chain (S_enc = 2688/amax, no lower clamp on "
                "E4M3 block scales); the RHT is TE's bit for bit, stochastic "
                "rounding TE's rule with fp8lab's own Philox stream"
           : r.nvfp4_mode == Nvfp4Mode::kTorchaoTraining
               ? "torchao 0.18's NVFP4TrainingConfig kernels (bf16 operands; TE's per-tensor "
                 "scale, block scales (amax_b/6)*S_enc floored at 2^-6); torchao's config is "
                 "nvfp4_2d, nvfp4_rht and nvfp4_stochastic_rounding all true; the RHT sign "
                 "vector is TE's (torchao draws one per Linear unless given one); stochastic "
                 "rounding with fp8lab's own Philox stream"
               : "torchao 0.18's nvfp4_quantize (block scales floored at 2^-6)",
           "fp4-formats.md §3"});
    } else if (r.mx_stochastic_rounding || r.mx_rht) {
      // Tseng et al.'s MXFP4 backward: neither TE nor torchao has it (docs/fp4.md). Their switches
      // are environment variables of the patched Megatron-LM.
      c.runner = "Tseng et al.'s Megatron-LM patch (amazon-science/mxfp4-llm), not TE or torchao";
      c.te_recipe_class = "MXFP4LinearWithGradAccumulationAndAsyncCommunication";
      c.forwarded_kwargs = {
          fmt::format("BW_USE_MXFP4={}", r.mx_rht ? (r.mx_stochastic_rounding ? 3 : 1) : 4),
          "HBS=64"};
    } else {
      c.runner = te ? "none (TE has no MXFP4/MXFP6 quantizer)" : "torchao";
      c.te_recipe_class = fmt::format("MXLinearConfig(elem_dtype={}, scale_calculation_mode={})",
                                      sim::spec(*element).name,
                                      te ? "(TE's MXFP8 rule)" : name(r.mx_scale_mode));
    }
    c.quirks.push_back({"scaling", std::string(name(r.scaling)), "",
                        "trains on the sim backend only (no FP4/FP6 kernels in gpu/ yet); GEMMs "
                        "in Blackwell's block-scaled model by default",
                        "docs/fp4.md"});
    return c;
  }
  if (is_torchao_scaling(r.scaling)) {
    c.runner = "torchao";
    c.te_recipe_class = fmt::format("Float8LinearConfig.from_recipe_name(\"{}\")", name(r.scaling));
    if (!r.override_linear_precision.none()) {
      c.te_effective.override_linear_precision = {};
      c.quirks.push_back({"override_linear_precision", "not all false", "(false, false, false)",
                          "torchao's recipes have no per-GEMM override (only DISABLED cast "
                          "configs, which rowwise_with_gw_hp uses for wgrad)",
                          "torchao-mx.md §1.1"});
    }
    gemm_quirks(r, c, false);
    return c;
  }
  if (r.scaling == Scaling::static_) {
    c.runner = "none (TE, torchao and accelerate scale from measured amaxes only)";
    c.te_recipe_class = "(none)";
    c.quirks.push_back({"scaling", "static", "",
                        "fixed per-tensor scales, as unit scaling and u-muP train in FP8; no "
                        "peer of fp8lab's has the recipe, so nothing is compared",
                        "arXiv 2407.17465"});
    return c;
  }
  c.runner = "Transformer Engine";
  c.te_recipe_class = r.scaling == Scaling::block ? "Float8BlockScaling" : "Float8CurrentScaling";
  te_direct_quirks(r, c);
  gemm_quirks(r, c, true);
  return c;
}

// mx_2d and backward_override are fields of TE's recipe objects (common/recipe/__init__.py at
// d0067d0: MXFP8BlockScaling.enable_2d_quantization; backward_override on every class but
// DelayedScaling), which the TE run sets as the recipe does. torchao, Tseng et al.'s patch and
// static scaling have no backward_override: their run keeps the backward as the scaling says.
void te_recipe_field_quirks(const Recipe& r, Compatibility& c) {
  // Into the class's argument list: the kwargs, or a class already spelled as a call.
  const auto add_kwarg = [&c](const std::string& kwarg) {
    if (!c.te_recipe_class.empty() && c.te_recipe_class.back() == ')') {
      const bool empty = c.te_recipe_class.ends_with("()");
      c.te_recipe_class.insert(c.te_recipe_class.size() - 1, (empty ? "" : ", ") + kwarg);
    } else {
      c.forwarded_kwargs.push_back(kwarg);
    }
  };
  c.te_effective.mx_2d = r.mx_2d;
  if (r.mx_2d) add_kwarg("enable_2d_quantization=True");
  if (r.backward_override == BackwardOverride::kNone) return;
  const bool te = r.scaling == Scaling::current || r.scaling == Scaling::block ||
                  r.scaling == Scaling::mxfp8 ||
                  (r.scaling == Scaling::nvfp4 && r.nvfp4_mode == Nvfp4Mode::kTe);
  if (te) {
    c.te_effective.backward_override = r.backward_override;
    add_kwarg(fmt::format("backward_override='{}'", name(r.backward_override)));
    return;
  }
  c.te_effective.backward_override = BackwardOverride::kNone;
  c.quirks.push_back({"backward_override", std::string(name(r.backward_override)), "none",
                      fmt::format("{} (TE's recipe field); fp8lab runs it on scaling {} as it "
                                  "does on TE's",
                                  c.runner.starts_with("none")
                                      ? std::string("no peer runs this recipe, so none has "
                                                    "backward_override")
                                      : c.runner + " has no backward_override",
                                  name(r.scaling)),
                      "docs/fp4.md, backward_override"});
}

}  // namespace

Compatibility compatibility(const Recipe& r) {
  Compatibility c = compatibility_of_gemms(r);
  te_recipe_field_quirks(r, c);
  beyond_gemm_quirks(r, c);
  diagnostics_quirks(r, c);
  return c;
}
}  // namespace fp8lab::recipes
