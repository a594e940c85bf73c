// accelerate's readers and every quirk of te-accelerate.md §1 in the compatibility view: what the
// user asked for, what accelerate forwards, what TE really runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include "recipes/accelerate.hpp"
#include "recipes/compatibility.hpp"
#include "recipes/explain.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/runs_as.hpp"

using namespace fp8lab::recipes;

namespace {

Compatibility from_yaml(const std::string& fp8_config) {
  return compatibility(
      parse_accelerate_config_text("mixed_precision: fp8\nfp8_config:\n" + fp8_config, "a.yaml"));
}

const Quirk* find_quirk(const Compatibility& c, const std::string& field) {
  const auto it = std::find_if(c.quirks.begin(), c.quirks.end(),
                               [&](const Quirk& q) { return q.field == field; });
  return it == c.quirks.end() ? nullptr : &*it;
}

bool forwards(const Compatibility& c, const std::string& kwarg) {
  return std::find(c.forwarded_kwargs.begin(), c.forwarded_kwargs.end(), kwarg) !=
         c.forwarded_kwargs.end();
}

}  // namespace

TEST_CASE("accelerate's defaults, from an empty fp8_config and from an empty environment",
          "[recipes][accelerate]") {
  // te-accelerate.md §1.1: margin 0, interval 1, HYBRID, history 1024, most_recent, (F,F,F),
  // eval without FP8, no MXFP8; AO: pad_inner_dim and FSDP all-gather true.
  for (const auto& s : {parse_accelerate_config_text("fp8_config: {}\n", "a.yaml"),
                        read_accelerate_env({{"PATH", "/usr/bin"}})}) {
    CHECK(s.margin.value == 0);
    CHECK(s.interval.value == 1);
    CHECK(s.fp8_format.value == Fp8Format::kHybrid);
    CHECK(s.amax_history_len.value == 1024);
    CHECK(s.amax_compute_algo.value == AmaxComputeAlgo::kMostRecent);
    CHECK(s.override_linear_precision.value.none());
    CHECK_FALSE(s.use_autocast_during_eval.value);
    CHECK_FALSE(s.use_mxfp8_block_scaling.value);
    CHECK(s.pad_inner_dim.value);
    CHECK(s.enable_fsdp_float8_all_gather.value);
    CHECK_FALSE(s.margin.given());
    CHECK(recipe_as_asked(s) == Recipe{});
  }
}

TEST_CASE("str_to_bool accepts exactly accelerate's words, in any case", "[recipes][accelerate]") {
  for (const char* word : {"y", "yes", "t", "true", "on", "1", "TRUE", "Yes", "On"}) {
    INFO(word);
    CHECK(accelerate_str_to_bool(word) == true);
  }
  for (const char* word : {"n", "no", "f", "false", "off", "0", "False", "OFF"}) {
    INFO(word);
    CHECK(accelerate_str_to_bool(word) == false);
  }
  for (const char* word : {"", " true", "2", "(", "enabled", "truee"}) {
    INFO(word);
    CHECK_FALSE(accelerate_str_to_bool(word).has_value());
  }
}

TEST_CASE("environment variables, with accelerate's case folding", "[recipes][accelerate]") {
  const auto s = read_accelerate_env({{"ACCELERATE_FP8_FORMAT", "e4m3"},
                                      {"ACCELERATE_FP8_AMAX_COMPUTE_ALGO", "MAX"},
                                      {"ACCELERATE_FP8_AMAX_HISTORY_LEN", " 1_6 "},
                                      {"ACCELERATE_FP8_MARGIN", "+2"},
                                      {"ACCELERATE_FP8_OVERRIDE_WGRAD", "True"},
                                      {"ACCELERATE_FP8_USE_AUTOCAST_DURING_EVAL", "on"},
                                      {"ACCELERATE_FP8_AMAX_HISTORY_LENGTH", "16"},
                                      {"HOME", "/root"}});
  CHECK(s.fp8_format.value == Fp8Format::kE4M3);              // uppercased
  CHECK(s.amax_compute_algo.value == AmaxComputeAlgo::kMax);  // lowercased
  CHECK(s.amax_history_len.value == 16);                      // Python int(): spaces, underscores
  CHECK(s.margin.value == 2);
  CHECK(s.override_linear_precision.value == OverrideLinearPrecision{false, false, true});
  CHECK(s.use_autocast_during_eval.value);
  CHECK(s.fp8_format.source == SettingSource::environment);
  // A variable accelerate never reads is reported, with the one it probably meant.
  REQUIRE(s.ignored.size() == 1);
  CHECK(s.ignored[0].name == "ACCELERATE_FP8_AMAX_HISTORY_LENGTH");
  CHECK(s.ignored[0].why ==
        "accelerate never reads this variable (did you mean ACCELERATE_FP8_AMAX_HISTORY_LEN?)");
}

TEST_CASE("YAML keys: fp8_ prefix rule, nulls, PyYAML booleans", "[recipes][accelerate]") {
  // accelerate launch turns key k into fp8_k unless it starts with "fp8" (§1.7): `format` and
  // `fp8_format` are the same argument. A null value is None: not exported.
  const auto s = parse_accelerate_config_text(
      "fp8_config:\n  format: e4m3\n  margin: ~\n  use_autocast_during_eval: yes\n", "a.yaml");
  CHECK(s.fp8_format.value == Fp8Format::kE4M3);
  CHECK(s.fp8_format.site.line == 2);
  CHECK_FALSE(s.margin.given());
  CHECK(s.use_autocast_during_eval.value);
}

TEST_CASE("quirk: most_recent is never forwarded, so TE runs max", "[recipes][accelerate]") {
  const Compatibility c = from_yaml("  backend: TE\n  amax_history_len: 16\n");
  CHECK(c.asked.amax_compute_algo == AmaxComputeAlgo::kMostRecent);
  CHECK(c.te_effective.amax_compute_algo == AmaxComputeAlgo::kMax);
  CHECK(c.te_recipe_class == "DelayedScaling");
  CHECK(c.forwarded_kwargs == std::vector<std::string>{"amax_history_len=16"});
  const Quirk* q = find_quirk(c, "amax_compute_algo");
  REQUIRE(q);
  CHECK(q->asked == "most_recent");
  CHECK(q->runs == "max");
  // An explicit max is forwarded and is what runs: no quirk.
  const Compatibility m = from_yaml("  backend: TE\n  amax_compute_algo: max\n");
  CHECK(forwards(m, "amax_compute_algo=\"max\""));
  CHECK(find_quirk(m, "amax_compute_algo") == nullptr);
  CHECK(m.te_effective == m.asked);
}

TEST_CASE("quirk: only values that differ from accelerate's defaults are forwarded",
          "[recipes][accelerate]") {
  const Compatibility defaults = from_yaml("  backend: TE\n  fp8_format: HYBRID\n  margin: 0\n");
  CHECK(defaults.forwarded_kwargs.empty());
  const Compatibility c = from_yaml("  backend: TE\n  fp8_format: E4M3\n  margin: 2\n");
  CHECK(c.forwarded_kwargs == std::vector<std::string>{"fp8_format=Format.E4M3", "margin=2"});
  CHECK(c.te_effective.margin == 2);
  CHECK(c.runnable);
}

TEST_CASE("quirk: interval and override_linear_precision are dropped by TE 2.x",
          "[recipes][accelerate]") {
  const Compatibility c = from_yaml(
      "  backend: TE\n  interval: 4\n  override_linear_precision: [false, false, true]\n");
  CHECK(forwards(c, "interval=4"));
  CHECK(forwards(c, "override_linear_precision=(False, False, True)"));
  CHECK(c.asked.interval == 4);
  CHECK(c.asked.override_linear_precision.wgrad);
  CHECK(c.te_effective.interval == 1);
  CHECK(c.te_effective.override_linear_precision.none());
  REQUIRE(find_quirk(c, "interval"));
  REQUIRE(find_quirk(c, "override_linear_precision"));
  CHECK(find_quirk(c, "override_linear_precision")->runs ==
        "(false, false, false): every GEMM in FP8");
  CHECK(c.runnable);  // silently dropped, not refused
}

TEST_CASE("quirk: MXFP8 through accelerate is E4M3 everywhere", "[recipes][accelerate]") {
  const Compatibility c = from_yaml("  backend: TE\n  use_mxfp8_block_scaling: true\n");
  CHECK(c.te_recipe_class == "MXFP8BlockScaling");
  CHECK(c.asked.scaling == Scaling::mxfp8);
  CHECK(c.asked.fp8_format == Fp8Format::kHybrid);
  CHECK(c.te_effective.fp8_format == Fp8Format::kE4M3);
  REQUIRE(find_quirk(c, "fp8_format"));
  // most_recent with MXFP8 is accelerate's default: silently fine, and there is no history.
  CHECK(find_quirk(c, "amax_compute_algo") == nullptr);
  CHECK(c.runnable);
  // Asking for E4M3 explicitly: forwarded, nothing changes.
  const Compatibility e4m3 =
      from_yaml("  backend: TE\n  use_mxfp8_block_scaling: true\n  fp8_format: E4M3\n");
  CHECK(find_quirk(e4m3, "fp8_format") == nullptr);
  CHECK(e4m3.te_effective.fp8_format == Fp8Format::kE4M3);
}

TEST_CASE("quirk: MXFP8 forwards margin and interval, which nothing uses",
          "[recipes][accelerate]") {
  const Compatibility c =
      from_yaml("  use_mxfp8_block_scaling: true\n  margin: 3\n  interval: 2\n");
  CHECK(forwards(c, "margin=3"));
  REQUIRE(find_quirk(c, "margin"));
  CHECK(find_quirk(c, "margin")->runs == "unused");
  REQUIRE(find_quirk(c, "interval"));
  CHECK(c.asked.margin == 0);  // fp8lab's MXFP8 recipe has no margin to carry
}

TEST_CASE("quirk: pure E5M2 is refused by TE and run by fp8lab", "[recipes][accelerate]") {
  for (const char* mx : {"false", "true"}) {
    const Compatibility c =
        from_yaml(std::string("  fp8_format: E5M2\n  use_mxfp8_block_scaling: ") + mx + "\n");
    INFO("mxfp8 " << mx);
    CHECK_FALSE(c.runnable);
    CHECK(c.asked.fp8_format == Fp8Format::kE5M2);
    const Quirk* q = find_quirk(c, "fp8_format");
    REQUIRE(q);
    CHECK(q->runs.empty());
    CHECK(q->why.find("Pure E5M2 training is not supported.") != std::string::npos);
  }
}

TEST_CASE("quirk: the documented tuple-string form of override_linear_precision",
          "[recipes][accelerate]") {
  // YAML reads "(false, false, true)" as a string; accelerate launch exports "(", "f", "a" and
  // str_to_bool("(") raises. fp8lab reads what was meant and says accelerate cannot.
  const Compatibility c = from_yaml("  override_linear_precision: (false, false, true)\n");
  CHECK(c.asked.override_linear_precision == OverrideLinearPrecision{false, false, true});
  CHECK_FALSE(c.runnable);
  bool found = false;
  for (const auto& q : c.quirks) {
    if (q.field == "override_linear_precision" && q.runs.empty()) {
      found = true;
      CHECK(q.why.find("str_to_bool(\"(\") raises ValueError") != std::string::npos);
      CHECK(q.why.find("Write a list: [false, false, false]") != std::string::npos);
    }
  }
  CHECK(found);
  // The list form is what accelerate can read.
  const Compatibility list = from_yaml("  override_linear_precision: [false, false, true]\n");
  CHECK(list.runnable);
}

TEST_CASE("quirk: keys written by `accelerate config` that nothing reads",
          "[recipes][accelerate]") {
  const auto s = parse_accelerate_config_text(
      "fp8_config:\n  amax_history_length: 16\n  amax_compute_algorithm: max\n"
      "  optimization_level: O1\n",
      "a.yaml");
  CHECK(s.amax_history_len.value == 1024);
  CHECK(s.amax_compute_algo.value == AmaxComputeAlgo::kMostRecent);
  REQUIRE(s.ignored.size() == 3);
  CHECK(s.ignored[0].name == "fp8_config.amax_history_length");
  CHECK(s.ignored[0].site.line == 2);
  const Compatibility c = compatibility(s);
  REQUIRE(find_quirk(c, "fp8_config.amax_compute_algorithm"));
  CHECK(find_quirk(c, "fp8_config.amax_compute_algorithm")->runs == "ignored");
}

TEST_CASE("quirk: fp8_config is ignored unless mixed_precision is fp8", "[recipes][accelerate]") {
  const Compatibility c = compatibility(parse_accelerate_config_text(
      "mixed_precision: bf16\nfp8_config:\n  backend: TE\n", "a.yaml"));
  CHECK_FALSE(c.runnable);
  REQUIRE(find_quirk(c, "mixed_precision"));
}

TEST_CASE("quirk: eval autocast merges eval amaxes into training", "[recipes][accelerate]") {
  CHECK(find_quirk(from_yaml("  backend: TE\n"), "use_autocast_during_eval") == nullptr);
  const Compatibility c = from_yaml("  backend: TE\n  use_autocast_during_eval: true\n");
  REQUIRE(find_quirk(c, "use_autocast_during_eval"));
  CHECK(c.te_effective.use_autocast_during_eval);
}

TEST_CASE("quirk: DeepSpeed ignores the TE recipe settings", "[recipes][accelerate]") {
  const Compatibility c = compatibility(parse_accelerate_config_text(
      "distributed_type: DEEPSPEED\nmixed_precision: fp8\nfp8_config:\n  backend: TE\n"
      "  amax_history_len: 16\n  fp8_format: E4M3\n",
      "ds.yaml"));
  CHECK(c.asked.amax_history_len == 16);
  CHECK(c.te_effective.amax_history_len == 1024);
  CHECK(c.te_effective.fp8_format == Fp8Format::kHybrid);
  CHECK(c.te_effective.amax_compute_algo == AmaxComputeAlgo::kMax);
  CHECK(c.forwarded_kwargs.empty());
  REQUIRE(find_quirk(c, "distributed_type"));
}

TEST_CASE("quirk: convert_model's skip rule, as data", "[recipes][accelerate]") {
  const Compatibility te = from_yaml("  backend: TE\n");
  CHECK(te.asked.module_filter.require_dims_divisible_by_16);
  CHECK(te.asked.module_filter.skip_later_siblings_after_indivisible);
  REQUIRE(find_quirk(te, "module conversion"));
  const Compatibility ao = from_yaml("  backend: AO\n");
  CHECK(ao.asked.module_filter.skip_first_last_linear);
  CHECK(ao.asked.module_filter.require_dims_divisible_by_16);
}

TEST_CASE("backend AO: torchao tensorwise with accelerate's AO defaults", "[recipes][accelerate]") {
  const Compatibility c = from_yaml("  backend: AO\n  pad_inner_dim: false\n  margin: 2\n");
  CHECK(c.asked.scaling == Scaling::tensorwise);
  CHECK_FALSE(c.asked.pad_inner_dim);
  CHECK(c.asked.enable_fsdp_float8_all_gather);
  CHECK(c.asked.margin == 0);
  CHECK(c.te_recipe_class == "Float8LinearConfig");
  REQUIRE(find_quirk(c, "margin"));
  CHECK(find_quirk(c, "margin")->runs == "ignored");
}

TEST_CASE("backend not set: accelerate auto-detects", "[recipes][accelerate]") {
  const Compatibility c = from_yaml("  margin: 1\n");
  REQUIRE(find_quirk(c, "backend"));
  CHECK(c.te_recipe_class == "DelayedScaling");
}

TEST_CASE("fp8lab recipes: TE's direct classes and fp8lab-only choices", "[recipes][accelerate]") {
  // Block scaling asserts split accumulation on every GEMM (te-accelerate.md §5.3).
  const Compatibility block =
      compatibility(parse_recipe_text("scaling: block\ngemm: {fprop: hopper_fast}\n", "b.yaml"));
  CHECK(block.te_recipe_class == "Float8BlockScaling");
  CHECK_FALSE(block.runnable);
  // Current scaling with E5M2 is refused like every TE recipe.
  const Compatibility current =
      compatibility(parse_recipe_text("scaling: current\nfp8_format: E5M2\n", "c.yaml"));
  CHECK_FALSE(current.runnable);
  // The reference accumulation models exist in fp8lab only.
  const Compatibility seq = compatibility(parse_recipe_text("gemm: {wgrad: fp32_seq}\n", "d.yaml"));
  CHECK(seq.asked.gemm.wgrad == Accumulation::kFp32Seq);
  CHECK(seq.te_effective.gemm.wgrad == Accumulation::kHopperSplitAccumulator);
  REQUIRE(find_quirk(seq, "gemm.wgrad"));
  // A delayed recipe file gets accelerate's view too.
  CHECK(compatibility(Recipe{}).te_effective.amax_compute_algo == AmaxComputeAlgo::kMax);
}

TEST_CASE("explain prints the recipe, the TE-effective recipe and every quirk",
          "[recipes][accelerate]") {
  const std::string text =
      explain_text("mixed_precision: fp8\nfp8_config:\n  backend: TE\n  interval: 2\n", "run.yaml");
  CHECK(text.find("accelerate config run.yaml") == 0);
  CHECK(text.find("== recipe fp8lab runs (as asked") != std::string::npos);
  CHECK(text.find("DelayedScaling(interval=2)") != std::string::npos);
  CHECK(text.find("- interval: asked 2 -> 1 (the scale is recomputed every step)") !=
        std::string::npos);
  CHECK(text.find("- amax_compute_algo: asked most_recent -> max") != std::string::npos);
  const std::string env = explain_environment(
      {{"ACCELERATE_FP8_BACKEND", "TE"}, {"ACCELERATE_FP8_MARGIN", "2"}, {"PATH", "/bin"}});
  CHECK(env.find("accelerate settings from the ACCELERATE_FP8_* environment") == 0);
  CHECK(env.find("DelayedScaling(margin=2)") != std::string::npos);
  const std::string recipe = explain_text("scaling: current\n", "cur.yaml");
  CHECK(recipe.find("fp8lab recipe file cur.yaml") == 0);
  CHECK(recipe.find("Float8CurrentScaling") != std::string::npos);
}

TEST_CASE("explain names the peer of each sub-byte mode, TE's recipe fields, and where it trains",
          "[recipes][accelerate]") {
  const std::string te = explain_text("scaling: nvfp4\nnvfp4_2d: true\n", "te.yaml");
  CHECK(te.find("nvfp4_mode: te (TE's kernels)\nnvfp4_2d: true\nnvfp4_rht: false\n"
                "nvfp4_stochastic_rounding: false") != std::string::npos);
  CHECK(te.find("NVFP4BlockScaling(disable_rht=True, disable_stochastic_rounding=True, "
                "disable_2d_quantization=False)") != std::string::npos);
  CHECK(te.find("NOT RUNNABLE") == std::string::npos);
  CHECK(te.find("trains on the sim backend only") != std::string::npos);
  const std::string full = explain_text(
      "scaling: nvfp4\nnvfp4_2d: true\nnvfp4_rht: true\nnvfp4_stochastic_rounding: true\n",
      "full.yaml");
  CHECK(full.find("NVFP4BlockScaling(disable_rht=False, disable_stochastic_rounding=False, "
                  "disable_2d_quantization=False)") != std::string::npos);
  const std::string ao = explain_text("scaling: nvfp4\nnvfp4_mode: torchao\n", "ao.yaml");
  CHECK(ao.find("torchao 0.18's nvfp4_quantize") != std::string::npos);
  const std::string mx = explain_text("scaling: mxfp6_e3m2\nmx_scale_mode: rceil\n", "mx.yaml");
  CHECK(mx.find("element format: e3m2 (every operand; fp8_format is not used)") !=
        std::string::npos);
  CHECK(mx.find("MXLinearConfig(elem_dtype=e3m2, scale_calculation_mode=rceil)") !=
        std::string::npos);
  CHECK(mx.find("torchao_version: torchao-0.18") != std::string::npos);
}

TEST_CASE("explain shows mx_2d and backward_override, and the TE recipe that has them",
          "[recipes][accelerate][backward_override]") {
  const std::string te = explain_text(
      "scaling: mxfp8\nfp8_format: E4M3\nmx_2d: true\nbackward_override: dequantized\n", "te.yaml");
  INFO(te);
  CHECK(te.find("mx_2d: true (the weight in 32 x 32 tiles, one E8M0 each, in fprop and dgrad)") !=
        std::string::npos);
  CHECK(te.find("backward_override: dequantized (dgrad and wgrad in high precision on the "
                "forward's input and weight codes, dequantized; grad_output unquantized)") !=
        std::string::npos);
  CHECK(te.find("MXFP8BlockScaling(fp8_format=Format.E4M3, enable_2d_quantization=True, "
                "backward_override='dequantized')") != std::string::npos);
  const std::string nv =
      explain_text("scaling: nvfp4\nnvfp4_2d: true\nbackward_override: dequantized\n", "nv.yaml");
  CHECK(nv.find("disable_2d_quantization=False, backward_override='dequantized')") !=
        std::string::npos);
  // torchao has no backward_override: explain says so, and what fp8lab runs.
  const std::string ao =
      explain_text("scaling: tensorwise\nbackward_override: dequantized\n", "ao.yaml");
  INFO(ao);
  CHECK(ao.find("torchao has no backward_override") != std::string::npos);
  // high_precision is override_linear_precision [false, true, true]: explain prints the recipe as
  // written.
  const std::string hp =
      explain_text("scaling: current\nbackward_override: high_precision\n", "hp.yaml");
  CHECK(hp.find("backward_override: high_precision (dgrad and wgrad in high precision on the "
                "unquantized input and weight)") != std::string::npos);
}

TEST_CASE("every shipped example config and recipe file reads and explains",
          "[recipes][accelerate]") {
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(FP8LAB_SOURCE_DIR) + "/recipes/configs")) {
    INFO(entry.path().string());
    CHECK_NOTHROW(explain_file(entry.path().string()));
    ++files;
  }
  CHECK(files >= 4);
}

TEST_CASE("runs_as upstream: the recipe accelerate + TE run, with every change listed",
          "[recipes][accelerate][runs_as]") {
  const std::string path = std::string(FP8LAB_SOURCE_DIR) +
                           "/recipes/configs/accelerate-te-default.yaml";
  const RecipeToRun asked = read_recipe_to_run(path, RunsAs::asked);
  CHECK(asked.recipe.amax_compute_algo == AmaxComputeAlgo::kMostRecent);
  CHECK(asked.changed_fields.empty());
  const RecipeToRun upstream = read_recipe_to_run(path, RunsAs::upstream);
  CHECK(upstream.recipe.amax_compute_algo == AmaxComputeAlgo::kMax);
  CHECK(upstream.recipe.amax_history_len == asked.recipe.amax_history_len);
  REQUIRE(upstream.changed_fields.size() == 1);
  CHECK(
      change_text(upstream.changed_fields[0]).rfind("amax_compute_algo: most_recent -> max (", 0) ==
      0);

  // An fp8lab recipe file: TE 2.x has no per-GEMM override, so upstream runs all three in FP8.
  const Compatibility wgrad_hp = compatibility(parse_recipe_text(
      "scaling: current\noverride_linear_precision: [false, false, true]\n", "r.yaml"));
  const RecipeToRun te = recipe_to_run(wgrad_hp, RunsAs::upstream, {"r.yaml", 0});
  CHECK(te.recipe.override_linear_precision.none());
  CHECK(recipe_to_run(wgrad_hp, RunsAs::asked, {"r.yaml", 0}).recipe == wgrad_hp.asked);
}

TEST_CASE("runs_as upstream refuses what the peer refuses, naming the quirk",
          "[recipes][accelerate][runs_as]") {
  const Compatibility e5m2 = from_yaml("  backend: TE\n  fp8_format: E5M2\n");
  REQUIRE_FALSE(e5m2.runnable);
  CHECK(recipe_to_run(e5m2, RunsAs::asked, {"a.yaml", 0}).recipe == e5m2.asked);
  try {
    (void)recipe_to_run(e5m2, RunsAs::upstream, {"a.yaml", 0}, "combination fp8_format=E5M2: ");
    FAIL("expected a RecipeError");
  } catch (const RecipeError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.field() == "runs_as");
    CHECK(message.find("a.yaml") != std::string::npos);
    CHECK(message.find("combination fp8_format=E5M2: ") != std::string::npos);
    CHECK(message.find("fp8_format: E5M2 -> refused") != std::string::npos);
    CHECK(message.find("Pure E5M2 training is not supported.") != std::string::npos);
    CHECK(message.find("runs_as: asked") != std::string::npos);
  }
  CHECK_THROWS_WITH(parse_runs_as("upstrem", {"s.yaml", 3}, "runs_as"),
                    Catch::Contains("s.yaml:3") && Catch::Contains("accepted: asked, upstream") &&
                        Catch::Contains("did you mean 'upstream'"));
}
