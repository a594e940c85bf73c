// The recipe model: what one FP8 training run quantizes, how, and with which GEMM accumulation.
//
// A Recipe is a plain value: every field is explicit, nothing is read from the environment, and
// two recipes are the same run exactly when their canonical strings are equal. Readers
// (recipe_file.hpp, accelerate.hpp) build one; the sweep expander (sweep.hpp) builds many.
//
// Names follow the seed API (accelerate's TERecipeKwargs / AORecipeKwargs spelling) and the
// scaling kinds and accumulation models of docs/numerics.md §2-3.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/optimizer_states.hpp"
#include "recipes/schedule.hpp"
#include "sim/settings.hpp"

namespace fp8lab::recipes {

// docs/numerics.md §2: which scaling turns a tensor into FP8 bytes plus scales.
enum class Scaling : std::uint8_t {
  delayed,     // TE DelayedScaling (TERecipeKwargs): per-tensor, amax history
  current,     // TE Float8CurrentScaling: per-tensor, this tensor's amax, TE's fp32 formula
  tensorwise,  // torchao "tensorwise": per-tensor, this tensor's amax, torchao's f64 formula
  rowwise,     // torchao "rowwise": one scale per row along each GEMM's K
  rowwise_with_gw_hp,  // torchao "rowwise_with_gw_hp": rowwise, wgrad operands in high precision
  block,               // TE Float8BlockScaling: 1x128 activations/grads, 128x128 weights
  mxfp8,               // TE MXFP8BlockScaling (use_mxfp8_block_scaling): 32-element E8M0 blocks
  // Below 8 bits (docs/fp4.md): every operand in the element format, the MX rules of mxfp8.
  mxfp4,       // MX with E2M1 elements (torchao float4_e2m1fn_x2 MX)
  mxfp6_e2m3,  // MX with E2M3 elements (torchao fp6_e2m3)
  mxfp6_e3m2,  // MX with E3M2 elements (torchao fp6_e3m2)
  nvfp4,       // NVFP4: E2M1 in 16-element blocks, E4M3 block scales, fp32 per-tensor scale
  // Statically scaled FP8 (unit scaling, u-muP: arXiv 2407.17465): every operand per tensor with
  // the fixed multiplier static_scale, no amax measured; spelled `static` in files.
  static_,
};

// The settings a recipe chooses are sim's own types (sim/settings.hpp), imported by name;
// recipes/ adds only their spellings in files (name / parse below):
//   Fp8Format        accelerate's FP8Format literal: HYBRID (E4M3 forward, E5M2 gradients;
//                    te-accelerate.md §2.2), E4M3, E5M2
//   AmaxComputeAlgo  max, most_recent
//   E8M0Mode         mx_scale_mode (docs/numerics.md §2.5): te, floor, ceil, even, rceil
//   TorchaoVersion   torchao_version (torchao-mx.md §4.2-4.3): torchao-0.18 (the default),
//                    torchao-main
//   Accumulation     docs/numerics.md §3: fp32_seq, hopper_split (sm_90 model promoted every 128 K,
//                    TE use_split_accumulator=True), hopper_fast (never promoted, TE's fast
//                    accumulation), exact
//   ElementwisePrecision  norm_affine_precision, activation_precision: high (the default), bf16,
//                    mx (mxfp8 only)
//   Nvfp4Mode        nvfp4_mode (sim/scaling/nvfp4.hpp): te (TE's kernels, the default), torchao
//                    (torchao 0.18's nvfp4_quantize, torchao/prototype/mx_formats/nvfp4_tensor.py:
//                    1 x 16 blocks, round to nearest), torchao_training (torchao 0.18's prototype
//                    NVFP4TrainingConfig, prototype/moe_training/nvfp4_training: 16 x 16 weight
//                    tiles, RHT, stochastic rounding, with TE's sign vector; docs/fp4.md).
using sim::Accumulation;
using sim::scaling::AmaxComputeAlgo;
using sim::scaling::E8M0Mode;
using sim::scaling::ElementwisePrecision;
using sim::scaling::Fp8Format;
using sim::scaling::Nvfp4Mode;
using sim::scaling::TorchaoVersion;

struct GemmAccumulation {
  Accumulation fprop;
  Accumulation dgrad;
  Accumulation wgrad;
  friend bool operator==(const GemmAccumulation&, const GemmAccumulation&) = default;
};

// TE's recipe field backward_override (transformer_engine/common/recipe/__init__.py, every recipe
// class but DelayedScaling; pytorch/module/linear.py): any value other than none runs the backward
// unquantized (grad_output in high precision). high_precision: dgrad and wgrad on the unquantized
// input and weight, which is override_linear_precision [false, true, true] (canonicalize writes
// it so). dequantized: dgrad and wgrad in high precision on the forward's quantized input and
// weight (the fprop GEMM's codes) dequantized.
enum class BackwardOverride : std::uint8_t { kNone, kHighPrecision, kDequantized };

// (fprop, dgrad, wgrad): true runs that GEMM in the model's high precision (docs/numerics.md §2.1).
struct OverrideLinearPrecision {
  bool fprop = false;
  bool dgrad = false;
  bool wgrad = false;
  bool all() const { return fprop && dgrad && wgrad; }
  bool none() const { return !fprop && !dgrad && !wgrad; }
  friend bool operator==(const OverrideLinearPrecision&, const OverrideLinearPrecision&) = default;
};

// Which Linear layers are converted, as data (the seed's module_filter_func cannot be a file value).
// The member defaults are accelerate's TE rule (convert_model, te-accelerate.md §1.4); its torchao
// path differs (§1.6): see default_module_filter().
struct ModuleFilter {
  std::vector<std::string> skip_names;  // glob patterns (* and ?) over fully qualified names
  bool skip_first_last_linear = false;  // accelerate's AO default: first and last nn.Linear stay
  bool require_dims_divisible_by_16 = true;  // in_features % 16 == 0 and out_features % 16 == 0
  // accelerate's convert_model returns from the parent on the first indivisible Linear, so the
  // later siblings are neither converted nor visited (§1.4, "the bare return").
  bool skip_later_siblings_after_indivisible = true;
  friend bool operator==(const ModuleFilter&, const ModuleFilter&) = default;
};

// Linears and GEMMs kept in high precision inside an FP8 model, by regular expression over the
// Linear's fully qualified name ("blocks.0.mlp_fc"; ECMAScript, matched against the whole name),
// as TE's DisableFP8Layer / DisableFP8GEMM sections select layers by layer_name_regex_pattern
// and torchao's module_filter_fn by (module, fqn). A plain name is a regex matching itself
// (escape the dots to be strict). The lowering turns a match into a kHighPrecision plan for that
// (layer, operand, GEMM) (lowering.hpp: plan, keeps_high_precision). Canonical form
// (canonical_keep_high_precision): each list sorted and deduplicated; a pattern in `layers` is
// dropped from the per-GEMM lists, and one in all three per-GEMM lists moves to `layers`.
struct KeepHighPrecision {
  std::vector<std::string> layers;  // DisableFP8Layer: every GEMM of a matching Linear
  std::vector<std::string> fprop;   // DisableFP8GEMM: that GEMM of a matching Linear
  std::vector<std::string> dgrad;
  std::vector<std::string> wgrad;
  bool empty() const { return layers.empty() && fprop.empty() && dgrad.empty() && wgrad.empty(); }
  friend bool operator==(const KeepHighPrecision&, const KeepHighPrecision&) = default;
};

// Moves a GEMM of one Linear to high precision, for the rest of the run, once one of its quantized
// operands crosses a threshold on a training step (experiments/linear/autoswitch.hpp). The figures
// are those of issue 18 (5% underflow, MSE 1e-4); TE's released debug features (LogTensorStats,
// LogFp8TensorStats, DisableFP8GEMM/Layer, PerTensorScaling, FakeQuant) have no such rule to
// compare them with.
struct Autoswitch {
  bool enabled = false;
  double underflow_percent = 5.0;  // 100 * (nonzero inputs that became 0) / elements, > this
  double mse = 1e-4;               // mean (x - dequantized)^2 over finite elements, > this
  friend bool operator==(const Autoswitch&, const Autoswitch&) = default;
};

// One per-role rule (recipes/role_rules.hpp): on the Linears whose whole name one of `match`
// matches (none: every Linear) and the tensor roles in `roles` (a bit per Role of role_rules.hpp;
// all six by default), the fields it sets replace the recipe's; the rest are the recipe's, or the
// rule's scaling's defaults where the rule changes the scaling. Later rules win.
struct RoleRule {
  std::vector<std::string> match;
  std::uint8_t roles = 0x3f;
  std::optional<Scaling> scaling;
  std::optional<Fp8Format> fp8_format;
  std::optional<bool> power_2_scales;
  std::optional<E8M0Mode> mx_scale_mode;
  std::optional<TorchaoVersion> torchao_version;
  std::optional<Nvfp4Mode> nvfp4_mode;
  std::optional<bool> nvfp4_2d;
  std::optional<bool> nvfp4_rht;
  std::optional<bool> nvfp4_stochastic_rounding;
  std::optional<bool> mx_2d;
  friend bool operator==(const RoleRule&, const RoleRule&) = default;
};

struct Recipe {
  Scaling scaling = Scaling::delayed;
  Fp8Format fp8_format = Fp8Format::kHybrid;
  // Delayed scaling only (te-accelerate.md §2, docs/numerics.md §2.1).
  std::int64_t margin = 0;
  std::int64_t interval = 1;
  std::int64_t amax_history_len = 1024;
  AmaxComputeAlgo amax_compute_algo = AmaxComputeAlgo::kMostRecent;
  // Every scaling.
  OverrideLinearPrecision override_linear_precision{};
  // Every scaling but delayed (TE's DelayedScaling asserts None); none by default (then absent
  // from the canonical string).
  BackwardOverride backward_override = BackwardOverride::kNone;
  bool use_autocast_during_eval = false;
  GemmAccumulation gemm{Accumulation::kHopperFastAccum, Accumulation::kHopperSplitAccumulator,
                        Accumulation::kHopperSplitAccumulator};
  // current, tensorwise, rowwise, rowwise_with_gw_hp, block.
  bool power_2_scales = false;
  // MX scalings only (mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2: is_mx).
  E8M0Mode mx_scale_mode = E8M0Mode::kTe;
  // mxfp8 only: TE's MXFP8BlockScaling.enable_2d_quantization (default False): the weight in
  // 32 x 32 tiles, one E8M0 per tile, in the GEMMs that read it (fprop and dgrad: TE gives it to
  // its forward-mode weight quantizers only, pytorch/quantization.py). Off by default (then
  // absent from the canonical string).
  bool mx_2d = false;
  // MX (mxfp8, mxfp4, mxfp6_*) with a torchao scale mode only (uses_torchao_version).
  TorchaoVersion torchao_version = TorchaoVersion::kV0_18;
  // nvfp4 only: whose arithmetic, and whether weights take 16 x 16 tiles in every GEMM (TE's
  // NVFP4BlockScaling does by default, torchao's NVFP4TrainingConfig always: nvfp4_mode te or
  // torchao_training; the torchao mode is nvfp4_quantize, 1 x 16 only).
  Nvfp4Mode nvfp4_mode = Nvfp4Mode::kTe;
  bool nvfp4_2d = false;
  // nvfp4 with te only, the rest of TE's NVFP4BlockScaling (fp4-formats.md §4; TE's defaults
  // are on: disable_rht and disable_stochastic_rounding False): the 16-point RHT on the wgrad
  // GEMM's operands, and stochastic rounding of grad_output's copies. Off by default, like
  // nvfp4_2d, so that `scaling: nvfp4` alone is the plain quantizer.
  bool nvfp4_rht = false;
  bool nvfp4_stochastic_rounding = false;
  // static_ only: the multiplier s of q = cast_satfinite(RN(x * s)) for every operand (a positive
  // fp32 value; 1 casts the tensors as they are, as u-muP's unit-scaled models do).
  double static_scale = 1.0;
  // mxfp4 only, Tseng et al.'s MXFP4 backward (arXiv 2502.20586; docs/fp4.md, "MXFP4 with
  // stochastic rounding and the RHT"): every operand of the dgrad and wgrad GEMMs rounded with
  // their 'dither_scale' (3/4 prescale, stochastic rounding, E8M0 floor scales: needs
  // mx_scale_mode floor), and both backward GEMMs' operands transformed along K by a 64-point
  // Hadamard with random signs drawn afresh each backward call. Off by default; the forward
  // stays as the recipe says (their BF16 forward: override_linear_precision [true, false, false]).
  bool mx_stochastic_rounding = false;
  bool mx_rht = false;
  // torchao scalings only (AORecipeKwargs; accelerate's defaults are true, torchao-mx.md §1.1).
  bool pad_inner_dim = true;
  bool enable_fsdp_float8_all_gather = true;
  ModuleFilter module_filter{};
  // Beyond the GEMMs (sim/settings.hpp, ElementwisePrecision), in FP8 regions only, like the FP8
  // Linears: LayerNorm's affine weight and bias, and the activation function's input and output.
  // Any scaling may use bf16; mx needs mxfp8 (its mx_scale_mode, torchao_version, forward format).
  ElementwisePrecision norm_affine_precision = ElementwisePrecision::kHigh;
  ElementwisePrecision activation_precision = ElementwisePrecision::kHigh;
  // Every scaling; empty / disabled by default (then absent from the canonical string).
  KeepHighPrecision keep_high_precision{};
  Autoswitch autoswitch{};
  // Per module and tensor role (recipes/role_rules.hpp); empty by default (then absent from the
  // canonical string).
  std::vector<RoleRule> per_role{};
  // A precision schedule (schedule.hpp): the stages that follow this recipe, each from a step or
  // a fraction of the run on. Empty: this recipe for the whole run (then absent from the
  // canonical string).
  std::vector<ScheduleStage> schedule{};
  // AdamW's moments and the master weights (optimizer_states.hpp); all fp32 by default, then
  // absent from the canonical string.
  OptimizerStates optimizer_states{};

  friend bool operator==(const Recipe&, const Recipe&) = default;
};

// ---- names (the spelling used in files, errors and canonical strings) -------------------------
std::string_view name(Scaling);
std::string_view name(Fp8Format);
std::string_view name(AmaxComputeAlgo);
std::string_view name(E8M0Mode);
std::string_view name(TorchaoVersion);
std::string_view name(Accumulation);
std::string_view name(ElementwisePrecision);
std::string_view name(Nvfp4Mode);
std::string_view name(BackwardOverride);
std::optional<Scaling> parse_scaling(std::string_view);
std::optional<Fp8Format> parse_fp8_format(std::string_view);
std::optional<AmaxComputeAlgo> parse_amax_compute_algo(std::string_view);
std::optional<E8M0Mode> parse_mx_scale_mode(std::string_view);
std::optional<TorchaoVersion> parse_torchao_version(std::string_view);
std::optional<Accumulation> parse_accumulation(std::string_view);
std::optional<ElementwisePrecision> parse_elementwise_precision(std::string_view);
std::optional<Nvfp4Mode> parse_nvfp4_mode(std::string_view);
std::optional<BackwardOverride> parse_backward_override(std::string_view);
// All accepted names, comma-separated, for error messages.
std::string accepted_scalings();
std::string accepted_fp8_formats();
std::string accepted_amax_compute_algos();
std::string accepted_mx_scale_modes();
std::string accepted_torchao_versions();
std::string accepted_accumulations();
std::string accepted_elementwise_precisions();
std::string accepted_nvfp4_modes();
std::string accepted_backward_overrides();

// ---- per-scaling defaults and applicability --------------------------------------------------
bool is_torchao_scaling(Scaling);  // tensorwise, rowwise, rowwise_with_gw_hp
bool uses_amax_history(Scaling);   // delayed only: margin, interval, history, algorithm
bool is_mx(Scaling);               // mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2: E8M0 blocks of 32
// The element format of every operand under a sub-byte scaling (mxfp4, nvfp4: E2M1; mxfp6_e2m3,
// mxfp6_e3m2); nullopt for the FP8 scalings, whose fp8_format decides.
std::optional<sim::Format> subbyte_element_format(Scaling);
bool has_power_2_option(Scaling);  // current, tensorwise, rowwise, rowwise_with_gw_hp, block
// MX with mx_scale_mode floor, ceil, even or rceil: the only recipes torchao_version changes.
bool uses_torchao_version(Scaling, E8M0Mode);
bool uses_torchao_version(const Recipe&);
// te-accelerate.md §6 (TE) and torchao-mx.md §1.2 (use_fast_accum T/F/F): block scaling enforces
// split accumulation everywhere; every other recipe uses fast accumulation for fprop only.
// The sub-byte scalings (mxfp4, mxfp6_*, nvfp4) default to blackwell_block everywhere, the
// block-scaled MMA that runs them (sim/gemm/block_scaled.hpp).
GemmAccumulation default_gemm_accumulation(Scaling);
// Whether a GEMM model reads FP4/FP6 operands: fp32_seq, exact and blackwell_block do; the two
// Hopper models do not (Hopper has no FP4/FP6 MMA).
bool gemm_model_takes_subbyte(Accumulation);
// TE/accelerate: HYBRID; torchao rowwise recipes: E4M3 everywhere; TE block scaling: E4M3.
Fp8Format default_fp8_format(Scaling);
// torchao rowwise recipes and TE block scaling default to power-of-2 scales.
bool default_power_2_scales(Scaling);
// TE scalings: accelerate's convert_model rule; torchao scalings: accelerate's _prepare_ao rule.
ModuleFilter default_module_filter(Scaling);
// The canonical form of the lists (see KeepHighPrecision); resolve() and canonicalize() apply it.
KeepHighPrecision canonical_keep_high_precision(KeepHighPrecision);

// ---- identity ---------------------------------------------------------------------------------
// Every field in a fixed order, "key=value;..." (fields the scaling does not use included, so that
// the string alone reconstructs the recipe). Stable across runs, builds and machines. The
// exceptions, added later, leave the string and run id of every other recipe as it was:
// torchao_version is written (after mx_scale_mode) only where uses_torchao_version;
// norm_affine_precision / activation_precision (at the end) only when not high, then
// keep_high_precision only when not empty, then autoswitch only when enabled, then per_role only
// when not empty (role_rules.hpp: per_role_text), then schedule only when not empty
// (schedule_text); nvfp4_mode and
// nvfp4_2d (after torchao_version's place) only for scaling nvfp4, then nvfp4_rht and
// nvfp4_stochastic_rounding, each only when true; static_scale (in the same place) only for
// scaling static; mx_stochastic_rounding and mx_rht (after torchao_version) each only when true,
// then mx_2d only when true, then backward_override only when not none.
std::string canonical_string(const Recipe&);
// 16 hex digits: FNV-1a 64 of text (fixed constants, so no id or hash the project stores ever
// depends on the standard library's std::hash). Run ids, sweep run keys and sweep.json's
// sweep_text_fnv1a all use it.
std::string fnv1a_hex(std::string_view text);
// fnv1a_hex(canonical_string(r)): the run id of a recipe.
std::string run_id(const Recipe&);
// The fields this recipe's scaling actually uses, one "key: value" per line, for people.
std::string describe(const Recipe&);

}  // namespace fp8lab::recipes
