#include "recipes/compatibility.hpp"

#include <fmt/format.h>

namespace fp8lab::recipes {
namespace {

std::string bool_text(bool b) { return b ? "true" : "false"; }
std::string override_text(const OverrideLinearPrecision& o) {
  return fmt::format("({}, {}, {})", bool_text(o.fprop), bool_text(o.dgrad), bool_text(o.wgrad));
}

// accelerate's KwargsHandler.to_kwargs(): only fields that differ from accelerate's defaults reach
// the TE recipe constructor (te-accelerate.md §1.2 step 1).
std::vector<std::string> forwarded(const AccelerateFp8Settings& s) {
  std::vector<std::string> kwargs;
  if (s.fp8_format.value != Fp8Format::kHybrid) {
    kwargs.push_back(fmt::format("fp8_format=Format.{}", name(s.fp8_format.value)));
  }
  if (s.margin.value != 0) kwargs.push_back(fmt::format("margin={}", s.margin.value));
  if (s.interval.value != 1) kwargs.push_back(fmt::format("interval={}", s.interval.value));
  if (s.amax_history_len.value != 1024) {
    kwargs.push_back(fmt::format("amax_history_len={}", s.amax_history_len.value));
  }
  if (s.amax_compute_algo.value != AmaxComputeAlgo::kMostRecent) {
    kwargs.push_back(fmt::format("amax_compute_algo=\"{}\"", name(s.amax_compute_algo.value)));
  }
  if (!s.override_linear_precision.value.none()) {
    const auto& o = s.override_linear_precision.value;  // as Python prints the tuple
    const auto py = [](bool b) { return b ? "True" : "False"; };
    kwargs.push_back(fmt::format("override_linear_precision=({}, {}, {})", py(o.fprop), py(o.dgrad),
                                 py(o.wgrad)));
  }
  return kwargs;
}

// Notes that hold for every TE recipe through accelerate.
void te_conversion_notes(Compatibility& c) {
  c.quirks.push_back({"module conversion", "every nn.Linear", "Linears with both dims % 16 == 0",
                      "convert_model skips a Linear with a dim not divisible by 16 with a bare "
                      "return, so its later siblings are neither converted nor visited",
                      "te-accelerate.md §1.4"});
  c.quirks.push_back({"reduce_amax, fp8_dpa, fp8_mha", "not settable",
                      "TE defaults (true, false, "
                      "false)",
                      "accelerate exposes no kwarg for them; amax is reduced over the world group",
                      "te-accelerate.md §1.2"});
}

// Under DeepSpeed TE runs its own defaults, whatever the settings say.
void deepspeed_quirks(Compatibility& c) {
  c.te_effective = Recipe{};
  c.te_effective.amax_compute_algo = AmaxComputeAlgo::kMax;
  c.forwarded_kwargs.clear();
  c.te_recipe_class = "DelayedScaling";
  c.quirks.push_back({"distributed_type", "DEEPSPEED",
                      "DelayedScaling() with its TE defaults (HYBRID, margin 0, history 1024, max)",
                      "_prepare_deepspeed passes fp8_recipe_handler, not te_recipe_handler, to "
                      "apply_fp8_autowrap, so the TE settings are ignored (by code reading)",
                      "te-accelerate.md §1.5"});
}

// What happens to the settings between accelerate and TE's recipe: refused, replaced by TE's
// defaults, or dropped.
void te_forwarding_quirks(const AccelerateFp8Settings& s, Compatibility& c) {
  const bool mx = s.use_mxfp8_block_scaling.value;
  Recipe& te = c.te_effective;
  if (s.fp8_format.value == Fp8Format::kE5M2) {
    c.runnable = false;
    c.quirks.push_back({"fp8_format", "E5M2", "",
                        fmt::format("forwarded to {} whose __post_init__ asserts \"Pure E5M2 "
                                    "training is not supported.\"; fp8lab runs it anyway",
                                    c.te_recipe_class),
                        "te-accelerate.md §1.2, §2.1"});
  }
  if (mx && s.fp8_format.value == Fp8Format::kHybrid) {
    te.fp8_format = Fp8Format::kE4M3;
    c.quirks.push_back({"fp8_format", "HYBRID", "E4M3 (forward and gradients)",
                        "HYBRID is accelerate's default, so it is not forwarded, and "
                        "MXFP8BlockScaling's own default is E4M3",
                        "te-accelerate.md §1.2, §4.1"});
  }
  if (!mx && s.amax_compute_algo.value == AmaxComputeAlgo::kMostRecent) {
    te.amax_compute_algo = AmaxComputeAlgo::kMax;
    c.quirks.push_back(
        {"amax_compute_algo", "most_recent", "max",
         std::string("most_recent is accelerate's default, so it is never forwarded, and "
                     "DelayedScaling's default is max") +
             (s.amax_history_len.value == 1 ? " (with amax_history_len 1 both give the same "
                                              "numbers)"
                                            : ""),
         "te-accelerate.md §1.2"});
  }
  if (s.interval.value != 1) {
    te.interval = 1;
    c.quirks.push_back({"interval", std::to_string(s.interval.value),
                        "1 (the scale is recomputed every step)",
                        fmt::format("forwarded, then silently ignored: {} is a pydantic dataclass "
                                    "that drops unknown kwargs (TE >= 2.3 has no interval; TE "
                                    "1.8-2.2 warn it is unused; TE never used it)",
                                    c.te_recipe_class),
                        "te-accelerate.md §1.2, §2.1"});
  }
  if (!s.override_linear_precision.value.none()) {
    te.override_linear_precision = {};
    te.gemm = default_gemm_accumulation(te.scaling);
    c.quirks.push_back({"override_linear_precision",
                        override_text(s.override_linear_precision.value),
                        "(false, false, false): every GEMM in FP8",
                        "forwarded, then silently dropped: the field is gone since TE 2.0 and "
                        "pydantic ignores unknown kwargs (TE 1.x accepted only (false, false, "
                        "true))",
                        "te-accelerate.md §1.2, §2.1"});
  }
}

// Settings TE takes but that do not do what they say: an unread margin, MXFP8's hardware, FP8 in
// eval.
void te_runtime_quirks(const AccelerateFp8Settings& s, Compatibility& c) {
  const bool mx = s.use_mxfp8_block_scaling.value;
  if (mx && s.margin.value != 0) {
    c.quirks.push_back({"margin", std::to_string(s.margin.value), "unused",
                        "forwarded to MXFP8BlockScaling, which has a margin field that nothing "
                        "reads",
                        "te-accelerate.md §1.2, §4.1"});
  }
  if (mx) {
    c.quirks.push_back({"use_mxfp8_block_scaling", "true",
                        "only on compute capability 10.x (Blackwell)",
                        "TE's MXFP8 needs sm_100 and cuBLAS >= 12.8; on H100/H200 accelerate "
                        "raises \"MXFP8 block scaling is not available\" (fp8lab emulates it)",
                        "te-accelerate.md §4.1"});
  }
  if (s.use_autocast_during_eval.value) {
    c.quirks.push_back({"use_autocast_during_eval", "true",
                        "FP8 in eval, and eval amaxes merge into the next training step's scale",
                        "under no_grad TE records the eval casts' amax in history row 0 but skips "
                        "the scale update, so the next training step's update sees them",
                        "te-accelerate.md §1.3"});
  }
}

void te_quirks(const AccelerateFp8Settings& s, Compatibility& c) {
  if (s.distributed_type && *s.distributed_type == "DEEPSPEED") {
    deepspeed_quirks(c);
  } else {
    te_forwarding_quirks(s, c);
    te_runtime_quirks(s, c);
  }
  te_conversion_notes(c);
}

void ao_quirks(const AccelerateFp8Settings& s, Compatibility& c) {
  const auto ignore = [&](const std::string& field, bool given, const std::string& asked) {
    if (!given) return;
    c.quirks.push_back({field, asked, "ignored",
                        "backend AO builds AORecipeKwargs, which reads none of TERecipeKwargs' "
                        "fields",
                        "te-accelerate.md §1.1, §1.5"});
  };
  ignore("fp8_format", s.fp8_format.given(), std::string(name(s.fp8_format.value)));
  ignore("margin", s.margin.given(), std::to_string(s.margin.value));
  ignore("interval", s.interval.given(), std::to_string(s.interval.value));
  ignore("amax_history_len", s.amax_history_len.given(), std::to_string(s.amax_history_len.value));
  ignore("amax_compute_algo", s.amax_compute_algo.given(),
         std::string(name(s.amax_compute_algo.value)));
  ignore("override_linear_precision", s.override_linear_precision.given(),
         override_text(s.override_linear_precision.value));
  ignore("use_autocast_during_eval", s.use_autocast_during_eval.given(),
         bool_text(s.use_autocast_during_eval.value));
  ignore("use_mxfp8_block_scaling", s.use_mxfp8_block_scaling.given(),
         bool_text(s.use_mxfp8_block_scaling.value));
  c.quirks.push_back({"module conversion", "every nn.Linear",
                      "all but the first and last Linear, and only those with dims % 16 == 0",
                      "Accelerator._prepare_ao passes no filter, so convert_model_to_fp8_ao "
                      "filters the first/last Linear of the whole model and indivisible dims",
                      "te-accelerate.md §1.6"});
  if (s.enable_fsdp_float8_all_gather.value) {
    c.quirks.push_back({"enable_fsdp_float8_all_gather", "true", "no effect without FSDP2",
                        "it only changes the weight all-gather of FSDP2; a single-process run "
                        "never gathers",
                        "te-accelerate.md §1.5, torchao-mx.md §2.8"});
  }
}

}  // namespace

Compatibility compatibility(const AccelerateFp8Settings& s) {
  Compatibility c;
  c.asked = recipe_as_asked(s);
  c.te_effective = c.asked;
  if (!s.backend) {
    c.quirks.push_back({"backend", "not set", "TE assumed by fp8lab",
                        "accelerate auto-detects by what is installed: torchao, then TE, then "
                        "MS-AMP",
                        "te-accelerate.md §1.5"});
  }
  if (s.mixed_precision && *s.mixed_precision != "fp8") {
    c.runnable = false;
    c.trains_without_fp8 = *s.mixed_precision;
    c.quirks.push_back({"mixed_precision", *s.mixed_precision, "no FP8 at all",
                        "accelerate launch exports fp8_config only when mixed_precision is fp8",
                        "te-accelerate.md §1.7"});
  }
  if (!s.override_written_as_string.empty()) {
    c.runnable = false;
    c.quirks.push_back({"override_linear_precision",
                        fmt::format("the string \"{}\"", s.override_written_as_string), "",
                        "YAML reads the documented tuple form as one string; accelerate launch "
                        "exports its characters \"(\", \"f\", \"a\" and str_to_bool(\"(\") raises "
                        "ValueError. Write a list: [false, false, false]",
                        "te-accelerate.md §1.7"});
  }
  for (const auto& in : s.ignored) {
    c.quirks.push_back({in.name, in.value, "ignored", in.why, "te-accelerate.md §1.7"});
  }
  if (s.backend == Fp8Backend::AO) {
    c.te_recipe_class = "Float8LinearConfig";
    c.runner = "accelerate + torchao";
    c.forwarded_kwargs = {fmt::format("pad_inner_dim={}", s.pad_inner_dim.value ? "True" : "False"),
                          fmt::format("enable_fsdp_float8_all_gather={}",
                                      s.enable_fsdp_float8_all_gather.value ? "True" : "False")};
    ao_quirks(s, c);
  } else {
    c.te_recipe_class = s.use_mxfp8_block_scaling.value ? "MXFP8BlockScaling" : "DelayedScaling";
    c.runner = "accelerate + Transformer Engine";
    c.forwarded_kwargs = forwarded(s);
    te_quirks(s, c);
  }
  return c;
}

std::string no_fp8_baseline_command(const Compatibility& c) {
  const std::string mixed = c.trains_without_fp8.value_or("");
  return fmt::format("fp8lab run --workload W --baseline-only --baseline-precision {}",
                     mixed == "bf16" || mixed == "fp16" ? "bf16" : "fp32");
}

std::string format_compatibility(const Compatibility& c, const std::string& origin) {
  std::string out = fmt::format("{}\n\n", origin);
  out += fmt::format("== recipe fp8lab runs (as asked; run id {})\n{}\n", run_id(c.asked),
                     describe(c.asked));
  std::string kwargs;
  for (const auto& k : c.forwarded_kwargs) kwargs += (kwargs.empty() ? "" : ", ") + k;
  // "DelayedScaling(margin=2)"; a class spelled as a call already ("...from_recipe_name(...)")
  // takes no argument list.
  const std::string call = c.te_recipe_class.find('(') == std::string::npos
                               ? c.te_recipe_class + "(" + kwargs + ")"
                               : c.te_recipe_class;
  if (c.trains_without_fp8) {
    // No FP8 recipe to show: what runs is the model in that precision (fp8lab's baseline).
    const std::string& mixed = *c.trains_without_fp8;
    out += fmt::format("== what {} runs: NO FP8 (mixed_precision: {}; the fp8_config section is "
                       "never read)\nthe model in {} without FP8: fp8lab's high-precision "
                       "baseline ({}); fp8lab run --as upstream refuses this config\n\n",
                       c.runner, mixed, mixed == "no" ? "fp32" : mixed, no_fp8_baseline_command(c));
  } else {
    out += fmt::format("== what {} runs (run id {}; to run it: fp8lab run --recipe FILE --as "
                       "upstream, or runs_as: upstream in a sweep)\n{}\n{}{}\n",
                       c.runner, run_id(c.te_effective), call, describe(c.te_effective),
                       c.runnable ? ""
                                  : "NOT RUNNABLE through accelerate/TE as written (see "
                                    "below)\n");
  }
  out += fmt::format("== dropped or changed on the way ({})\n", c.quirks.size());
  for (const auto& q : c.quirks) {
    out += fmt::format("- {}: asked {} -> {}\n    {} [{}]\n", q.field, q.asked,
                       q.runs.empty() ? "REFUSED" : q.runs, q.why, q.reference);
  }
  return out;
}

}  // namespace fp8lab::recipes
