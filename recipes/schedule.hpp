// Precision schedules (issue 43 item 2): a recipe that changes at a step or a fraction of the run,
// as NVIDIA's NVFP4 pretraining (arXiv 2509.25149) moves to higher precision for the last part of
// training. In a recipe file or a sweep's `schedules:` arm:
//
//   schedule:
//     - {until: 0.82, recipe: {scaling: nvfp4}}    # steps [0, round(0.82 * steps))
//     - {recipe: high_precision}                   # the rest: the baseline's Linears
//
// or `until_step: N` (the next stage starts at step N, 0-based) instead of `until`, or
// `until_signal: {underflow_above: F}` (issue 43 item 2: the stage ends after the first of its
// steps whose underflow fraction, the elements that the step's trained quantizations of every
// FP8 Linear turned from non-zero to 0 over the elements they quantized, pooled over layers,
// operands and GEMMs as the `layers` rows count them, exceeds F in (0, 1); the next stage starts
// at the step after), or `until_signal: {grad_noise_below: R, every: N, consecutive: K}` (the
// stage ends after the first of its measured steps, its first step and every N-th after it (N
// default 10), that ends K measured steps in a row (K default 1) whose gradient-to-noise ratio
// ||g|| / ||g_q - g|| is below R > 0; g_q the step's whole-model gradient, every trained
// parameter's before clipping, g the exact recompute of the same step, as the probes'
// exact_on_run whole_model row measures it, experiments/run/probe_engine.hpp. R = sqrt(3) is
// Chmiel et al.'s threshold ("FP4 All the Way", arXiv 2505.19115); their own runs switch at a
// chosen step, not on a measurement, recipes/README.md. K > 1 keeps one noisy measurement from
// ending the stage). One signal per stage. Every entry but the last ends at its `until` (a fraction in (0, 1)),
// `until_step` (an integer >= 1), strictly increasing, or `until_signal`, one kind per schedule;
// the last has none. A high_precision stage cannot end on a signal (it quantizes nothing). The
// signal is a function of the trajectory alone, so a run started again from step 0 switches at
// the same step. A stage's `recipe` is a mapping of
// recipe fields (over the sweep's `base`) or `high_precision` (every GEMM of every converted
// Linear runs the baseline's high-precision GEMM; not the first stage).
//
// The first stage is the Recipe itself; Recipe::schedule holds the stages after it, each with
// where it starts. The run converts its Linears once, with the first stage (its module_filter),
// and at each stage's first step gives every converted Linear the stage's recipe and a fresh
// scaling state (experiments/run/schedule_run.hpp). So, refused when read:
//   - stages whose module_filter or use_autocast_during_eval differ (the converted Linears and the
//     eval passes are the run's, not a stage's);
//   - autoswitch in any stage (it switches on its own, from the run's statistics);
//   - stages whose optimizer_states or master_weights differ: the run builds one AdamW, and no
//     peer converts stored moments mid-run (COAT's CoatAdamW fixes its states' dtypes from the
//     qargs given at construction when it first creates them, _init_group); a high_precision
//     stage keeps the run's optimizer;
//   - a delayed stage directly after a delayed stage: TE keeps that state (below), and fp8lab
//     does not model carrying an amax history into a changed delayed recipe.
//
// What TE does when the recipe object changes between fp8_autocast calls (TransformerEngine at
// d0067d0da6cb, 2026-08-22, transformer_engine/pytorch/module/base.py): init_fp8_metadata returns
// early while the recipe compares equal; otherwise set_meta_tensor keeps the existing
// RecipeState when the new recipe is of the same kind (DelayedScaling on a
// DelayedScalingRecipeState: the amax history and scales are kept, adjust_amax_history_length
// truncating it to the first `amax_history_len` rows or zero-padding it; MXFP8, current, block,
// NVFP4: returned as is, which its TODO(#3157) says leaves a same-kind change of settings
// unapplied), and for a different kind builds a new RecipeState whose inherit_state_from
// (quantization.py) finds nothing to take from another class: a fresh state, with the warning
// "Recipe type changed from ... This may affect model behavior." Outside fp8_autocast (a
// high-precision stage) fp8_initialized is set False and the module's state is left alone.
// fp8lab's stages after the first therefore start from a fresh state, which is TE's behaviour
// for every change of kind; a same-kind change of settings takes effect at the switch here,
// where TE's cached quantizers would not apply it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Node;
}

namespace fp8lab::recipes {

struct Recipe;
struct FieldSetting;
enum class Strictness;

// Where a stage starts: the previous entry's `until` (a fraction of the run's steps) or its
// `until_step`.
struct ScheduleStart {
  bool is_fraction = true;
  double fraction = 0.0;
  std::int64_t step = 0;
  // until_signal: the stage before ends after the first of its steps whose underflow fraction
  // exceeds underflow_above, or the first of its measured steps (its first and every `every`-th
  // after it) that ends `consecutive` measured steps in a row whose gradient-to-noise ratio is
  // below grad_noise_below (is_fraction false, step 0; the signal not given is 0); where it
  // starts is known in the run.
  bool on_signal = false;
  double underflow_above = 0.0;
  double grad_noise_below = 0.0;
  std::int64_t every = 0;        // grad_noise_below's measurement interval in steps (>= 1)
  std::int64_t consecutive = 0;  // grad_noise_below's measurements in a row below it (>= 1)
  friend bool operator==(const ScheduleStart&, const ScheduleStart&) = default;
};

struct ScheduleStage {
  ScheduleStart start;
  std::shared_ptr<const Recipe> recipe;  // null: high precision (kHighPrecisionStage)
};
// Equal starts and equal recipes (by value; two high-precision stages are equal).
bool operator==(const ScheduleStage& a, const ScheduleStage& b);

inline constexpr std::string_view kHighPrecisionStage = "high_precision";

// Reads a `schedule:` sequence (above). The first stage's recipe is `base` then its fields,
// resolved with `strictness`; so is every later stage's. `field` names the node in messages
// ("schedules[0].schedule"). Throws RecipeError naming the file, line, field and what is accepted.
Recipe parse_schedule(const YAML::Node& node, const std::vector<FieldSetting>& base,
                      Strictness strictness, const std::string& file, const std::string& field);

// The step (0-based) at which a stage starts in a run of `steps_planned` steps: `until_step`, or
// llround(until * steps_planned). std::logic_error for a signal stage (known only in the run).
std::int64_t stage_start_step(const ScheduleStart& start, std::int64_t steps_planned);
// The grad_noise_below signal's measurement interval when `every` is not given.
inline constexpr std::int64_t kDefaultGradNoiseEvery = 10;
// Its measurements in a row when `consecutive` is not given: the first below the threshold ends
// the stage, as before `consecutive` existed.
inline constexpr std::int64_t kDefaultGradNoiseConsecutive = 1;
// Whether a start names `consecutive`: only past its default, so that the canonical string, run
// id, texts, job file and record of a recipe without it are what they were before it existed.
inline bool names_consecutive(const ScheduleStart& start) {
  return start.consecutive > kDefaultGradNoiseConsecutive;
}

// "0.82", "step 82", "underflow above 0.01", "grad/noise below 1.732 every 10 steps" or, with
// consecutive 3, "grad/noise below 1.732 every 10 steps, 3 measurements in a row".
std::string start_text(const ScheduleStart& start);

// The recipe's stages in order: the recipe itself without its schedule, then each later stage's
// recipe (nullptr: high precision), with where each starts (the first: step 0).
struct StageView {
  ScheduleStart start;
  std::shared_ptr<const Recipe> recipe;
};
std::vector<StageView> schedule_stages(const Recipe& recipe);

// The canonical string's schedule (recipe.hpp: ";schedule=" then this): each later stage as
// "{from=START:CANONICAL}" with CANONICAL the stage's canonical_string or high_precision.
std::string schedule_text(const Recipe& recipe);
// For people (describe, explain, the dry run): "schedule: ..." and one line per stage.
std::string describe_schedule(const Recipe& recipe);
// A short label: "nvfp4 until 0.82, then high_precision".
std::string schedule_label(const Recipe& recipe);

}  // namespace fp8lab::recipes
