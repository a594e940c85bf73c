// Every validation error, table-driven, with its full message: where (file:line or the variable),
// which field, the bad value, the accepted values and, for near misses, a suggestion.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "recipes/accelerate.hpp"
#include "recipes/error.hpp"
#include "recipes/fields.hpp"
#include "recipes/limits.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/sweep.hpp"

using namespace fp8lab::recipes;

namespace {

struct Case {
  const char* what;
  std::string input;
  std::string message;
};

// Runs `read` on each case and compares the whole message; a case that does not throw fails.
void check_messages(const std::vector<Case>& cases,
                    const std::function<void(const std::string&)>& read) {
  for (const auto& c : cases) {
    INFO(c.what << "\ninput:\n" << c.input);
    try {
      read(c.input);
      FAIL("no error was raised");
    } catch (const RecipeError& e) {
      CHECK(std::string(e.what()) == c.message);
    }
  }
}

const std::string kFields = all_field_names();
const std::string kMargin = margin_limit().accepted();
const std::string kHistory = amax_history_len_limit().accepted();
const std::string kInterval = interval_limit().accepted();

}  // namespace

TEST_CASE("integer recipe fields have ranges that say why", "[recipes][validation]") {
  CHECK(kMargin ==
        "an integer from 0 to 149 (TE computes fp8_max * 2^-margin in fp32; above 149, 2^-margin "
        "is below the smallest fp32 and every scale would be 0)");
  CHECK_THAT(kHistory, Catch::StartsWith("an integer from 1 to 1048576 (memory estimate: "));
  CHECK_THAT(kInterval, Catch::StartsWith("an integer from 1 to 2147483647 ("));
  // The narrowest consumer: sim's delayed scaling state holds the margin as an int.
  CHECK(margin_limit().max <= std::numeric_limits<int>::max());
  CHECK(integer_limit("margin") == &margin_limit());
  CHECK(integer_limit("seed") == nullptr);
}

TEST_CASE("recipe file errors", "[recipes][validation]") {
  const std::vector<Case> cases = {
      {"unknown key, near miss", "margin: 1\namax_histroy_len: 16\n",
       "r.yaml:2: amax_histroy_len: unknown field; accepted: " + kFields +
           " (did you mean 'amax_history_len'?)"},
      {"unknown key, nothing close", "colour: red\n",
       "r.yaml:1: colour: unknown field; accepted: " + kFields},
      {"wrong type: word for an integer", "margin: two\n",
       "r.yaml:1: margin: wrong type: expected an integer, got 'two'; accepted: " + kMargin},
      {"wrong type: float for an integer", "amax_history_len: 16.5\n",
       "r.yaml:1: amax_history_len: wrong type: expected an integer, got '16.5'; accepted: " +
           kHistory},
      {"wrong type: list for an integer", "margin: [1, 2]\n",
       "r.yaml:1: margin: wrong type: expected an integer, got 'a sequence'; accepted: " + kMargin},
      {"wrong type: boolean", "use_autocast_during_eval: maybe\n",
       "r.yaml:1: use_autocast_during_eval: wrong type: expected a boolean, got 'maybe'; "
       "accepted: true, false"},
      {"missing value", "margin:\n",
       "r.yaml:1: margin: wrong type: expected an integer, got 'nothing (null)'; accepted: " +
           kMargin},
      {"integer too large", "amax_history_len: 99999999999999999999\n",
       "r.yaml:1: amax_history_len: out of the 64-bit integer range: '99999999999999999999'; "
       "accepted: " +
           kHistory},
      {"negative margin", "margin: -1\n",
       "r.yaml:1: margin: must not be negative, got '-1'; accepted: " + kMargin},
      {"zero history length", "amax_history_len: 0\n",
       "r.yaml:1: amax_history_len: must be at least 1, got '0'; accepted: " + kHistory},
      {"margin 2^32 (trained as margin 0 before the range check)", "margin: 4294967296\n",
       "r.yaml:1: margin: out of range, got '4294967296'; accepted: " + kMargin},
      {"margin 2^63 - 1", "margin: 9223372036854775807\n",
       "r.yaml:1: margin: out of range, got '9223372036854775807'; accepted: " + kMargin},
      {"margin 150", "margin: 150\n",
       "r.yaml:1: margin: out of range, got '150'; accepted: " + kMargin},
      {"history of 10^9 (bad_alloc before)", "amax_history_len: 1000000000\n",
       "r.yaml:1: amax_history_len: out of range, got '1000000000'; accepted: " + kHistory},
      {"interval 2^31", "interval: 2147483648\n",
       "r.yaml:1: interval: out of range, got '2147483648'; accepted: " + kInterval},
      {"zero interval", "interval: 0\n",
       "r.yaml:1: interval: must be at least 1, got '0'; accepted: " + kInterval},
      {"unknown format", "fp8_format: HYBRD\n",
       "r.yaml:1: fp8_format: unknown value 'HYBRD'; accepted: HYBRID, E4M3, E5M2 (did you mean "
       "'HYBRID'?)"},
      {"unknown algorithm", "amax_compute_algo: most-recent\n",
       "r.yaml:1: amax_compute_algo: unknown value 'most-recent'; accepted: max, most_recent "
       "(did you mean 'most_recent'?)"},
      {"unknown scaling", "scaling: rowwize\n",
       "r.yaml:1: scaling: unknown value 'rowwize'; accepted: delayed, current, tensorwise, "
       "rowwise, rowwise_with_gw_hp, block, mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2, nvfp4, static "
       "(did you "
       "mean 'rowwise'?)"},
      {"unknown accumulation in a nested mapping", "gemm:\n  fprop: fast\n",
       "r.yaml:2: gemm.fprop: unknown value 'fast'; accepted: fp32_seq, hopper_split, "
       "hopper_fast, exact, blackwell_block"},
      {"overrides: two booleans", "override_linear_precision: [true, false]\n",
       "r.yaml:1: override_linear_precision: must be three booleans (fprop, dgrad, wgrad), got 'a "
       "sequence'; accepted: three booleans [fprop, dgrad, wgrad], e.g. [false, false, true]"},
      {"overrides: not a boolean", "override_linear_precision: [true, false, maybe]\n",
       "r.yaml:1: override_linear_precision: must be three booleans (fprop, dgrad, wgrad), got 'a "
       "sequence'; accepted: three booleans [fprop, dgrad, wgrad], e.g. [false, false, true]"},
      {"overrides: a string of two", "override_linear_precision: (false, true)\n",
       "r.yaml:1: override_linear_precision: must be three booleans (fprop, dgrad, wgrad), got "
       "'(false, true)'; accepted: three booleans [fprop, dgrad, wgrad], e.g. [false, false, "
       "true]"},
      {"MXFP8 with a history length", "use_mxfp8_block_scaling: true\namax_history_len: 16\n",
       "r.yaml:2: amax_history_len: is not supported for MXFP8 block scaling (stateless: no amax "
       "history, no margin); value '16'; accepted: remove it, or use scaling: delayed"},
      {"MXFP8 with an algorithm", "scaling: mxfp8\namax_compute_algo: max\n",
       "r.yaml:2: amax_compute_algo: is not supported for MXFP8 block scaling (stateless: no "
       "amax history, no margin); value 'max'; accepted: remove it, or use scaling: delayed"},
      {"current scaling with a margin", "scaling: current\nmargin: 2\n",
       "r.yaml:2: margin: is not used by scaling 'current' (only delayed scaling keeps an amax "
       "history); value '2'; accepted: remove it, or use scaling: delayed"},
      {"scaling contradicts use_mxfp8_block_scaling",
       "scaling: current\nuse_mxfp8_block_scaling: true\n",
       "r.yaml:2: use_mxfp8_block_scaling: contradicts scaling: current; value 'true'; accepted: "
       "scaling: mxfp8, or use_mxfp8_block_scaling: false"},
      {"power_2_scales with delayed scaling", "power_2_scales: true\n",
       "r.yaml:1: power_2_scales: is not an option of scaling 'delayed'; value 'true'; accepted: "
       "current, tensorwise, rowwise, rowwise_with_gw_hp, block"},
      {"mx_scale_mode without MXFP8", "mx_scale_mode: floor\n",
       "r.yaml:1: mx_scale_mode: applies to the MX scalings only, not 'delayed'; value 'floor'; "
       "accepted: scaling: mxfp8, mxfp4, mxfp6_e2m3 or mxfp6_e3m2"},
      {"nvfp4_mode without NVFP4", "nvfp4_mode: torchao\n",
       "r.yaml:1: nvfp4_mode: applies to scaling nvfp4 only, not 'delayed'; value 'torchao'; "
       "accepted: scaling: nvfp4"},
      {"static_scale without static scaling", "scaling: current\nstatic_scale: 2\n",
       "r.yaml:2: static_scale: applies to scaling static only, not 'current'; value '2'; "
       "accepted: scaling: static"},
      {"static_scale zero", "scaling: static\nstatic_scale: 0\n",
       "r.yaml:2: static_scale: out of range, got '0'; accepted: a positive number that is an fp32 "
       "value, e.g. 1, 0.5, 0.0625"},
      {"static_scale not an fp32 value", "scaling: static\nstatic_scale: 0.1\n",
       "r.yaml:2: static_scale: out of range, got '0.1'; accepted: a positive number that is an "
       "fp32 value, e.g. 1, 0.5, 0.0625"},
      {"static_scale not a number", "scaling: static\nstatic_scale: one\n",
       "r.yaml:2: static_scale: wrong type: expected a number, got 'one'; accepted: a positive "
       "number that is an fp32 value, e.g. 1, 0.5, 0.0625"},
      {"unknown NVFP4 mode", "scaling: nvfp4\nnvfp4_mode: nvidia\n",
       "r.yaml:2: nvfp4_mode: unknown value 'nvidia'; accepted: te, torchao, torchao_training"},
      {"NVFP4 2-D with torchao", "scaling: nvfp4\nnvfp4_mode: torchao\nnvfp4_2d: true\n",
       "r.yaml:3: nvfp4_2d: is not an option of nvfp4_mode torchao (torchao's nvfp4_quantize, "
       "1 x 16 blocks only); TE's NVFP4BlockScaling (nvfp4_mode te) and torchao's prototype "
       "NVFP4TrainingConfig (nvfp4_mode torchao_training) have 16 x 16 weight tiles; value "
       "'true'; accepted: nvfp4_2d: false with nvfp4_mode: torchao, or nvfp4_mode: te or "
       "torchao_training"},
      {"NVFP4 RHT with torchao", "scaling: nvfp4\nnvfp4_mode: torchao\nnvfp4_rht: true\n",
       "r.yaml:3: nvfp4_rht: is not an option of nvfp4_mode torchao (torchao's nvfp4_quantize, "
       "which has no RHT); TE's NVFP4BlockScaling (nvfp4_mode te) and torchao's prototype "
       "NVFP4TrainingConfig (nvfp4_mode torchao_training, with TE's fixed sign vector) have it; "
       "value 'true'; accepted: nvfp4_rht: false with nvfp4_mode: torchao, or nvfp4_mode: te or "
       "torchao_training"},
      {"NVFP4 SR with torchao",
       "scaling: nvfp4\nnvfp4_mode: torchao\nnvfp4_stochastic_rounding: true\n",
       "r.yaml:3: nvfp4_stochastic_rounding: is not an option of nvfp4_mode torchao (torchao's "
       "nvfp4_quantize, which rounds to nearest); TE's NVFP4BlockScaling (nvfp4_mode te) and "
       "torchao's prototype NVFP4TrainingConfig (nvfp4_mode torchao_training) round gradients "
       "stochastically; value 'true'; accepted: nvfp4_stochastic_rounding: false with nvfp4_mode: "
       "torchao, or nvfp4_mode: te or torchao_training"},
      {"nvfp4_rht without NVFP4", "scaling: mxfp4\nnvfp4_rht: true\n",
       "r.yaml:2: nvfp4_rht: applies to scaling nvfp4 only, not 'mxfp4'; value 'true'; accepted: "
       "scaling: nvfp4"},
      {"mx_rht without MXFP4", "scaling: nvfp4\nmx_rht: true\n",
       "r.yaml:2: mx_rht: is Tseng et al.'s MXFP4 backward, modelled for scaling mxfp4 only, not "
       "'nvfp4'; value 'true'; accepted: scaling: mxfp4"},
      {"mx_2d without MXFP8", "scaling: mxfp4\nmx_2d: true\n",
       "r.yaml:2: mx_2d: is TE's MXFP8BlockScaling.enable_2d_quantization (32 x 32 weight tiles), "
       "modelled for scaling mxfp8 only, not 'mxfp4'; value 'true'; accepted: scaling: mxfp8"},
      {"mx_2d not a boolean", "scaling: mxfp8\nmx_2d: tiles\n",
       "r.yaml:2: mx_2d: wrong type: expected a boolean, got 'tiles'; accepted: true, false"},
      {"backward_override with delayed scaling", "backward_override: dequantized\n",
       "r.yaml:1: backward_override: is not an option of delayed scaling (TE's DelayedScaling "
       "asserts backward_override None); value 'dequantized'; accepted: backward_override: none "
       "with scaling: delayed, or another scaling (current, block, mxfp8 and nvfp4 are TE's)"},
      {"unknown backward_override", "scaling: current\nbackward_override: fp32\n",
       "r.yaml:2: backward_override: unknown value 'fp32'; accepted: none, high_precision, "
       "dequantized"},
      {"mx_stochastic_rounding without floor scales",
       "scaling: mxfp4\nmx_stochastic_rounding: true\n",
       "r.yaml:2: mx_stochastic_rounding: is Tseng et al.'s dither_scale, whose scales are E8M0 "
       "floor (microxcaling's shared exponent), not mx_scale_mode 'te'; value 'true'; accepted: "
       "mx_scale_mode: floor with mx_stochastic_rounding: true"},
      {"Hopper GEMM with NVFP4", "scaling: nvfp4\ngemm:\n  wgrad: hopper_split\n",
       "r.yaml:3: gemm.wgrad: models Hopper's FP8 MMA, which has no FP4/FP6 operands (scaling "
       "'nvfp4'); value 'hopper_split'; accepted: blackwell_block (the default), fp32_seq or "
       "exact"},
      {"Blackwell GEMM with delayed scaling", "gemm:\n  fprop: blackwell_block\n",
       "r.yaml:2: gemm.fprop: is Blackwell's block-scaled MMA, which reads MX or NVFP4 blocks "
       "only, "
       "not scaling 'delayed'; value 'blackwell_block'; accepted: fp32_seq, hopper_split, "
       "hopper_fast or exact"},
      {"fp8_format with MXFP4", "scaling: mxfp4\nfp8_format: E4M3\n",
       "r.yaml:2: fp8_format: is not used by scaling 'mxfp4', whose every operand is e2m1; value "
       "'E4M3'; accepted: remove it, or use an FP8 scaling"},
      {"unknown MX scale mode", "scaling: mxfp8\nmx_scale_mode: round\n",
       "r.yaml:2: mx_scale_mode: unknown value 'round'; accepted: te, floor, ceil, even, rceil"},
      {"torchao option with TE scaling", "pad_inner_dim: false\n",
       "r.yaml:1: pad_inner_dim: is a torchao option, not used by scaling 'delayed'; value "
       "'false'; accepted: tensorwise, rowwise, rowwise_with_gw_hp"},
      {"gemm not a mapping", "gemm: fast\n",
       "r.yaml:1: gemm: expected a mapping, got 'fast'; accepted: fprop, dgrad, wgrad"},
      {"module filter names not a list", "module_filter:\n  skip_names: lm_head\n",
       "r.yaml:2: module_filter.skip_names: wrong type: expected a list, got 'lm_head'; accepted: "
       "a list of name globs, e.g. [\"lm_head\", \"*.proj\"]"},
      {"key given twice", "margin: 1\nmargin: 2\n",
       "r.yaml:2: margin: is given twice; accepted: one value per field"},
      {"not a mapping", "- margin\n",
       "r.yaml:1: recipe: expected a mapping of recipe fields, got 'a sequence'; accepted: " +
           kFields},
      {"YAML syntax", "margin: [1, 2\n",
       "r.yaml:2: YAML: syntax error: end of sequence flow not found"},
  };
  check_messages(cases, [](const std::string& text) { (void)parse_recipe_text(text, "r.yaml"); });
}

TEST_CASE("accelerate config errors", "[recipes][validation]") {
  const std::vector<Case> cases = {
      {"unknown key", "mixed_precision: fp8\nfp8_config:\n  amax_histroy_len: 16\n",
       "a.yaml:3: fp8_config.amax_histroy_len: unknown fp8_config key; accepted: "
       "amax_compute_algo, amax_history_len, backend, enable_fsdp_float8_all_gather, fp8_format, "
       "interval, margin, opt_level, override_dgrad, override_fprop, override_wgrad, "
       "pad_inner_dim, use_autocast_during_eval, use_mxfp8_block_scaling, "
       "override_linear_precision (did you mean 'amax_history_len'?)"},
      {"negative margin", "fp8_config:\n  margin: -2\n",
       "a.yaml:2: fp8_config.margin: must not be negative, got '-2'; accepted: " + kMargin},
      {"zero history length", "fp8_config:\n  amax_history_len: 0\n",
       "a.yaml:2: fp8_config.amax_history_len: must be at least 1, got '0'; accepted: " + kHistory},
      {"margin 2^32", "fp8_config:\n  margin: 4294967296\n",
       "a.yaml:2: fp8_config.margin: out of range, got '4294967296'; accepted: " + kMargin},
      {"margin beyond int64 (Python's int() takes it)",
       "fp8_config:\n  margin: 99999999999999999999\n",
       "a.yaml:2: fp8_config.margin: out of range, got '99999999999999999999'; accepted: " +
           kMargin},
      {"history of 10^9", "fp8_config:\n  amax_history_len: 1000000000\n",
       "a.yaml:2: fp8_config.amax_history_len: out of range, got '1000000000'; accepted: " +
           kHistory},
      {"not an int()", "fp8_config:\n  margin: 1.5\n",
       "a.yaml:2: fp8_config.margin: invalid literal for int() (accelerate raises ValueError) "
       "'1.5'; accepted: " +
           kMargin},
      {"unknown format", "fp8_config:\n  fp8_format: E3M4\n",
       "a.yaml:2: fp8_config.fp8_format: unknown value 'E3M4'; accepted: HYBRID, E4M3, E5M2 "
       "(did you mean 'E4M3'?)"},
      {"unknown algorithm", "fp8_config:\n  amax_compute_algo: mean\n",
       "a.yaml:2: fp8_config.amax_compute_algo: unknown value 'mean'; accepted: max, most_recent "
       "(did you mean 'max'?)"},
      {"overrides: two booleans", "fp8_config:\n  override_linear_precision: [false, true]\n",
       "a.yaml:2: fp8_config.override_linear_precision: must be three booleans (fprop, dgrad, "
       "wgrad), got 'a sequence'; accepted: a list [false, false, true] (accelerate also "
       "documents the string (false, false, true), which its launcher cannot parse)"},
      {"not a truth value", "fp8_config:\n  use_autocast_during_eval: maybe\n",
       "a.yaml:2: fp8_config.use_autocast_during_eval: invalid truth value (accelerate's "
       "str_to_bool raises ValueError) 'maybe'; accepted: y, yes, t, true, on, 1, n, no, f, "
       "false, off, 0"},
      {"MXFP8 with a history length",
       "fp8_config:\n  use_mxfp8_block_scaling: true\n  amax_history_len: 16\n",
       "a.yaml:3: fp8_config.amax_history_len: is not supported for MXFP8 block scaling "
       "(accelerate raises ValueError); value '16'; accepted: 1024 (accelerate's default, never "
       "forwarded), or use_mxfp8_block_scaling: false"},
      {"MXFP8 with max", "fp8_config:\n  amax_compute_algo: max\n  use_mxfp8_block_scaling: true\n",
       "a.yaml:2: fp8_config.amax_compute_algo: is not supported for MXFP8 block scaling "
       "(accelerate raises ValueError); value 'max'; accepted: most_recent (accelerate's "
       "default, never forwarded), or use_mxfp8_block_scaling: false"},
      {"lowercase backend", "fp8_config:\n  backend: te\n",
       "a.yaml:2: fp8_config.backend: unknown backend (accelerate's FP8BackendType is "
       "case-sensitive) 'te'; accepted: TE, AO (did you mean 'TE'?)"},
      {"MS-AMP backend", "fp8_config:\n  backend: MSAMP\n",
       "a.yaml:2: fp8_config.backend: names a backend fp8lab does not model (MS-AMP); value "
       "'MSAMP'; accepted: TE, AO"},
      {"fp8_config not a mapping", "fp8_config: [1]\n",
       "a.yaml:1: fp8_config: expected a mapping, got 'a sequence'; accepted: keys such as "
       "backend, fp8_format, margin"},
      {"nested value", "fp8_config:\n  margin: {a: 1}\n",
       "a.yaml:2: fp8_config.margin: wrong type: expected one value, got 'a mapping'; accepted: "
       "a single scalar"},
  };
  check_messages(
      cases, [](const std::string& text) { (void)parse_accelerate_config_text(text, "a.yaml"); });
}

TEST_CASE("ACCELERATE_FP8_* environment errors", "[recipes][validation]") {
  const std::vector<Case> cases = {
      {"not an int()", "ACCELERATE_FP8_MARGIN=abc",
       "environment: ACCELERATE_FP8_MARGIN: invalid literal for int() (accelerate raises "
       "ValueError) 'abc'; accepted: " +
           kMargin},
      {"not a truth value", "ACCELERATE_FP8_OVERRIDE_WGRAD=maybe",
       "environment: ACCELERATE_FP8_OVERRIDE_WGRAD: invalid truth value (accelerate's "
       "str_to_bool raises ValueError) 'maybe'; accepted: y, yes, t, true, on, 1, n, no, f, "
       "false, off, 0"},
      {"unknown format", "ACCELERATE_FP8_FORMAT=e5m",
       "environment: ACCELERATE_FP8_FORMAT: unknown value 'e5m'; accepted: HYBRID, E4M3, E5M2 "
       "(did you mean 'E5M2'?)"},
      {"MXFP8 with a history length",
       "ACCELERATE_FP8_USE_MXFP8_BLOCK_SCALING=1 ACCELERATE_FP8_AMAX_HISTORY_LEN=16",
       "environment: ACCELERATE_FP8_AMAX_HISTORY_LEN: is not supported for MXFP8 block scaling "
       "(accelerate raises ValueError); value '16'; accepted: 1024 (accelerate's default, never "
       "forwarded), or use_mxfp8_block_scaling: false"},
      {"lowercase backend (what `accelerate launch --fp8_backend te` exports)",
       "ACCELERATE_FP8_BACKEND=te",
       "environment: ACCELERATE_FP8_BACKEND: unknown backend (accelerate's FP8BackendType is "
       "case-sensitive) 'te'; accepted: TE, AO (did you mean 'TE'?)"},
      {"margin 2^32", "ACCELERATE_FP8_MARGIN=4294967296",
       "environment: ACCELERATE_FP8_MARGIN: out of range, got '4294967296'; accepted: " + kMargin},
      {"zero history", "ACCELERATE_FP8_AMAX_HISTORY_LEN=0",
       "environment: ACCELERATE_FP8_AMAX_HISTORY_LEN: must be at least 1, got '0'; accepted: " +
           kHistory},
  };
  check_messages(cases, [](const std::string& assignments) {
    std::map<std::string, std::string> env;  // "K=V K=V"
    std::size_t start = 0;
    while (start < assignments.size()) {
      const std::size_t end = std::min(assignments.find(' ', start), assignments.size());
      const std::string one = assignments.substr(start, end - start);
      env[one.substr(0, one.find('='))] = one.substr(one.find('=') + 1);
      start = end + 1;
    }
    (void)read_accelerate_env(env);
  });
}

TEST_CASE("sweep file errors", "[recipes][validation]") {
  const std::string top =
      "method, count, seed, workloads, seeds, base, parameters, name, description, runs_as, "
      "baseline_seeds, practical_band, null_runs, layer_stats_every, what_if, ablate, hypotheses, "
      "instability, null_noise, seed_budget, probes, probe_every, probe_attribution, probe_draws, "
      "probe_seeds, schedules";
  const std::vector<Case> cases = {
      {"unknown top-level key", "workloads: [w]\nparamaters: {}\n",
       "s.yaml:2: paramaters: unknown sweep key; accepted: " + top +
           " (did you mean 'parameters'?)"},
      {"what-if delayed", "workloads: [w]\nwhat_if: [mxfp8, delayed]\n",
       "s.yaml:2: what_if[1]: a stateful scaling (an amax history of its own quantizations) "
       "cannot be measured beside another's training: 'delayed'; accepted: current, tensorwise, "
       "rowwise, rowwise_with_gw_hp, block, mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2, nvfp4, static"},
      {"what-if unknown", "workloads: [w]\nwhat_if: [mxfp9]\n",
       "s.yaml:2: what_if[0]: unknown what-if recipe 'mxfp9'; accepted: current, tensorwise, "
       "rowwise, rowwise_with_gw_hp, block, mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2, nvfp4, static"},
      {"what-if twice", "workloads: [w]\nwhat_if: [block, block]\n",
       "s.yaml:2: what_if[1]: is given twice: 'block'; accepted: current, tensorwise, rowwise, "
       "rowwise_with_gw_hp, block, mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2, nvfp4, static"},
      {"layer_stats_every 0", "workloads: [w]\nlayer_stats_every: 0\n",
       "s.yaml:2: layer_stats_every: out of range: '0'; accepted: an integer >= 1"},
      {"unknown method", "method: bayes\nworkloads: [w]\n",
       "s.yaml:1: method: unknown value 'bayes'; accepted: grid, random, ablate"},
      {"random without count", "method: random\nworkloads: [w]\n",
       "s.yaml:1: count: is required by method: random; accepted: an integer >= 1"},
      {"count with grid", "method: grid\ncount: 3\nworkloads: [w]\n",
       "s.yaml:1: count: applies to method: random only; accepted: method: random, or remove it"},
      {"no workloads", "method: grid\n",
       "s.yaml: workloads: is required; accepted: a list of workload names"},
      {"unknown parameter", "workloads: [w]\nparameters:\n  margins: {values: [0, 1]}\n",
       "s.yaml:3: parameters.margins: unknown recipe field; accepted: " + kFields +
           " (did you mean 'margin'?)"},
      {"bad value, with its own line",
       "workloads: [w]\nparameters:\n  amax_history_len:\n    values:\n      - 16\n      - 0\n",
       "s.yaml:6: parameters.amax_history_len.values[1]: must be at least 1, got '0'; accepted: " +
           kHistory},
      {"W&B distribution", "workloads: [w]\nparameters:\n  margin: {distribution: int_uniform}\n",
       "s.yaml:3: parameters.margin.distribution: is not supported (only explicit value lists); "
       "accepted: values, value"},
      {"values not a list", "workloads: [w]\nparameters:\n  margin: {values: 3}\n",
       "s.yaml:3: parameters.margin.values: expected a non-empty list, got '3'; accepted: a list "
       "of values of margin"},
      {"bad base field", "workloads: [w]\nbase:\n  fp8_format: E4M4\n",
       "s.yaml:3: base.fp8_format: unknown value 'E4M4'; accepted: HYBRID, E4M3, E5M2 (did you "
       "mean 'E4M3'?)"},
      {"zero count", "method: random\ncount: 0\nworkloads: [w]\n",
       "s.yaml:2: count: out of range: '0'; accepted: an integer from 1 to 10000000"},
  };
  check_messages(cases, [](const std::string& text) { (void)parse_sweep_text(text, "s.yaml"); });
}

TEST_CASE("a sweep grid beyond the limit is refused when expanded", "[recipes][validation]") {
  // 100 x 100 x 100 x 4 = 4M combinations after gemm.fprop; gemm.dgrad takes it to 16M > 10M.
  auto hundred = [](int first) {
    std::string list = "[";
    for (int i = 0; i < 100; ++i) list += (i ? ", " : "") + std::to_string(first + i);
    return list + "]";
  };
  const std::string text =
      "workloads: [w]\nparameters:\n  margin: {values: " + hundred(0) +
      "}\n  interval: {values: " + hundred(1) + "}\n  amax_history_len: {values: " + hundred(1) +
      "}\n  gemm.fprop: {values: [exact, fp32_seq, hopper_fast, hopper_split]}"
      "\n  gemm.dgrad: {values: [exact, fp32_seq, hopper_fast, hopper_split]}\n";
  const Sweep sweep = parse_sweep_text(text, "big.yaml");
  try {
    (void)expand(sweep);
    FAIL("no error was raised");
  } catch (const RecipeError& e) {
    CHECK(std::string(e.what()) ==
          "big.yaml:7: parameters.gemm.dgrad: makes the grid larger than 10000000 combinations; "
          "accepted: fewer values, or method: random with a count");
  }
}
