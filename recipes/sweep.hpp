// Sweep files: a grid (or a seeded random sample of it) over recipe fields, workloads and seeds, in
// the shape of W&B sweep configs:
//
//   method: random            # grid | random | ablate (recipes/ablation.hpp: the runs that rank
//                             # the layers of the `base` recipe; no parameters, one workload)
//   count: 36                 # random only: parameter combinations drawn, without replacement
//   seed: 2026                # random only: the sampler's seed (splitmix64; same file, same draw)
//   workloads: [gpt-small]    # crossed with every combination (never sampled); an entry may
//                             # set workload options: llama-s:d_model=384 or
//                             # {llama-s: {d_model: 384}} (experiments/workloads/workload_options.hpp)
//   seeds: [0]                # training seeds, crossed likewise; or `auto` with seed_budget:
//                             # seeds planned from power (seed_plan below)
//   seed_budget: 20           # with seeds: auto only: the most seeds one row (a recipe on a
//                             # workload) runs, its pilot's 3 included; an integer from 3 to
//                             # kMaxSeedBudget
//   baseline_seeds: [0, 1, 2] # optional: the high-precision baseline also runs on these seeds
//                             # for every workload (besides `seeds`), so that the report can
//                             # measure the seed-to-seed noise floor its verdicts compare with
//                             # (experiments/stats/noise_floor.hpp; at least 3 seeds). Distinct
//                             # integers; recorded in sweep.json
//   practical_band: 0.0025    # optional: the paired verdicts' band on the relative loss error
//                             # (default 0.25%, DeepSeek-V3's bound; a fraction in (0, 1));
//                             # recorded in sweep.json (experiments/stats/paired_verdicts.hpp)
//   hypotheses: {...}         # optional: the report's pre-registered confirmatory tests, their
//                             # alpha and band (recipes/sweep_hypotheses.hpp); recorded in
//                             # sweep.json
//   instability: {loss_above: 0.2, after_step: 200}
//                             # optional: the pre-registered rule that makes a run `unstable`
//                             # (instability_rule.hpp, with its default); recorded in sweep.json
//                             # and in every run's record
//   null_runs: true           # optional (default false): also run the null recipe, the
//                             # baseline with a perturbation that is not FP8, on every
//                             # (workload, seed) of `seeds`: the report's chaos floor. true is
//                             # [once]; [once, per_step] adds the null that perturbs every step
//                             # (null_arms.hpp)
//   null_noise: current       # optional, with per_step only: the what-if recipe whose
//                             # quantization error sizes the per_step noise (default current)
//   layer_stats_every: 10     # optional: per-layer statistics into each run's Parquet sidecar
//                             # every 10th step (default: at the eval steps)
//   what_if: [mxfp8, block]   # optional: also measure these recipes' quantization of the same
//                             # tensors in every run, baselines included (what_if.hpp)
//   probes: [current, {scaling: current, fp8_format: E5M2}, "mxfp8:mx_scale_mode=floor"]
//                             # optional: each baseline runs these recipes' forward and backward
//                             # at its own weights and batch every probe_every-th step, and every
//                             # FP8 run the exact step at its own (probe_settings.hpp)
//   probe_every: 10           # optional (default 10 with probes): the probe steps, and the last
//   probe_attribution: all    # optional: first_middle_last (default), all, none
//   probe_draws: 4            # optional: draws per probe step of a stochastic recipe (default 4)
//   probe_seeds: [0]          # optional: only the runs of these seeds probe (default: every seed)
//   base: {scaling: delayed}  # optional recipe fields shared by every combination
//   schedules:                # optional: precision schedules (schedule.hpp), each one more arm
//     - schedule: [{until: 0.82, recipe: {scaling: nvfp4}}, {recipe: high_precision}]
//                             # run on every workload and seed beside the grid's combinations;
//                             # each stage's recipe is `base` then its fields (not with
//                             # runs_as upstream or method ablate)
//   runs_as: asked            # or upstream: run what accelerate + TE / torchao really run for
//                             # each combination (runs_as.hpp); the changes become its reasons
//   ablate: {per_gemm: false} # method: ablate only (ablation.hpp): layers, per_gemm
//   parameters:               # recipe fields (fields.hpp); file order = nesting order, first slowest
//     fp8_format: {values: [HYBRID, E4M3, E5M2]}
//     margin: {value: 0}      # one fixed value, as in W&B
//     gemm.fprop: {values: [hopper_fast, hopper_split]}
//
// Expansion canonicalizes each requested combination (canonical.hpp) and keeps one run per
// numerically distinct (recipe, workload, seed); every request points at its run with the reasons.
// The high-precision baseline is not part of the expansion: the runner runs it once per
// (workload, seed) of `seeds` and of `baseline_seeds`.
//
// Limits: a grid above 10^7 combinations is refused as a typo; below that, a sweep whose requested
// combinations would take more than 2 GB to expand (about 2300 bytes each, measured as a dry run's
// peak resident size per combination: 2.04 GB for 900,000) is refused naming the estimate. Every key of the file, at
// any depth, is given once (a repeated key is refused: PyYAML keeps the last, yaml-cpp the first),
// and the file is UTF-8 (recipes/utf8.hpp).
//
// For the `fp8lab sweep FILE [--dry-run]` command (experiments/cli/sweep_command.cpp):
//
//   const recipes::Sweep sweep = recipes::read_sweep(path);          // throws recipes::RecipeError
//   const recipes::SweepExpansion expansion = recipes::expand(sweep);
//   if (dry_run) { std::fputs(recipes::format_dry_run(expansion).c_str(), stdout); return 0; }
//   for (const recipes::SweepRun& run : expansion.runs)               // run.id names its results
//     train(run.workload, run.seed, run.recipe);
//   // + the baseline for each workload x seed; report every expansion.requested[i] against
//   //   expansion.runs[expansion.requested[i].run], with .reasons when it is not the run itself.
//
// Catch RecipeError and print e.what(): it names the file, line, field, value and accepted values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recipes/ablation.hpp"
#include "recipes/fields.hpp"
#include "recipes/instability_rule.hpp"
#include "recipes/null_arms.hpp"
#include "recipes/probe_settings.hpp"
#include "recipes/recipe.hpp"
#include "recipes/runs_as.hpp"
#include "recipes/sweep_hypotheses.hpp"

namespace fp8lab::recipes {

enum class SweepMethod : std::uint8_t { grid, random, ablate };

struct SweepParameter {
  std::string key;                   // a recipe field
  std::vector<FieldSetting> values;  // parsed, each with its own line
};

// Limits (above): the most parameter combinations a grid may have, and the most requests a sweep
// (count of method: random; combinations x workloads x seeds) may make.
inline constexpr std::uint64_t kMaxRequested = 10'000'000;

// `seeds: auto` (issue 41 item 5): every row runs the pilot seeds 0, 1, 2; the sweep driver then
// plans each row's seeds from its pilot (experiments/stats/seed_plan.hpp), at most seed_budget
// per row, and runs seeds 3, 4, ... up to that count.
inline constexpr std::int64_t kPilotSeeds = 3;
inline constexpr std::int64_t kMaxSeedBudget = 10000;
struct SeedPlanning {
  bool automatic = false;   // seeds: auto
  std::int64_t budget = 0;  // seed_budget: the most seeds a row runs, pilot included
};

struct Sweep {
  std::string file;
  std::string name;
  SweepMethod method = SweepMethod::grid;
  std::int64_t count = 0;  // random only
  std::uint64_t seed = 0;  // random only
  std::vector<std::string> workloads;
  std::vector<std::int64_t> seeds;  // seeds: auto: the pilot's, 0 .. kPilotSeeds - 1
  SeedPlanning seed_planning;
  std::vector<std::int64_t> baseline_seeds;  // empty: the baseline runs on `seeds` only
  double practical_band = 0.0025;            // the paired verdicts' band (fraction)
  SweepHypotheses hypotheses;                // alpha (default 0.05) and the confirmatory tests
  InstabilityRule instability = default_instability_rule();  // when a run is `unstable`
  std::vector<NullArm> null_runs;  // the null arms run on every (workload, seed); none: off
  std::string null_noise = kDefaultNullNoise;  // sizes the per_step arm (a what-if name)
  std::int64_t layer_stats_every = 0;          // the sidecar's steps; 0: the eval steps
  std::vector<std::string> what_if;            // what-if recipe names (what_if.hpp)
  ProbeSettings probes;                        // probe_settings.hpp; every == 0: off
  std::vector<FieldSetting> base;
  std::vector<SweepParameter> parameters;
  std::vector<Recipe> schedules;  // `schedules:`, each a recipe with its schedule, as requested
  RunsAs runs_as = RunsAs::asked;
  Site runs_as_site;
  // method: ablate. An empty layers list is filled by the caller before expand() (fp8lab sweep:
  // the Linears the base recipe converts in the workload).
  Ablation ablate;
};

struct RequestedCombination {
  std::vector<std::size_t> value_index;  // one per parameter: which of its values
  std::string workload;
  std::int64_t seed = 0;
  Recipe recipe;                     // as requested (before canonicalization)
  std::size_t run = 0;               // index into SweepExpansion::runs
  bool is_representative = false;    // true for the request the run was first created from
  std::vector<std::string> reasons;  // why it maps to a run that differs from it, or duplicates
  // runs_as upstream: the fields its run executes differently from the request because the peer
  // does (RecipeToRun::changed_fields; also the first reasons, as text). Empty for runs_as asked.
  std::vector<Quirk> changed_fields;
  // method: ablate: the arm this request is (its keep_high_precision settings are in `recipe`).
  std::optional<AblationArm> ablation;
};

struct SweepRun {
  Recipe recipe;  // canonical
  std::string workload;
  std::int64_t seed = 0;
  std::string id;  // 16 hex digits, stable: hash of canonical recipe + workload + seed
  std::vector<std::size_t> requests;  // indices into SweepExpansion::requested
};

struct SweepExpansion {
  Sweep sweep;
  std::uint64_t grid_size = 0;  // product of the parameters' value counts
  std::vector<RequestedCombination> requested;
  std::vector<SweepRun> runs;
  // method: ablate: the canonical string of the ablated recipe (the "all" arm), which names the
  // group of runs in the records and the report.
  std::string ablation_base;
};

// The id expand() gives the run that stands for (recipe, workload, seed): FNV-1a 64 (16 hex
// digits) of canonical_string(canonicalize(recipe).recipe) + ";workload=<w>;seed=<s>". For
// `fp8lab run` of a single recipe, so that it files its result under the sweep's id.
std::string sweep_run_id(const Recipe& recipe, const std::string& workload, std::int64_t seed);

Sweep read_sweep(const std::string& path);
Sweep parse_sweep_text(const std::string& text, const std::string& file);
// Throws RecipeError when a combination is invalid (e.g. an unknown value reached through `base`).
SweepExpansion expand(const Sweep& sweep);
// A request's label: its parameter assignment, "fp8_format=HYBRID margin=0" ("(base recipe)" for
// a sweep without parameters), as --dry-run and sweep.json print it.
std::string assignment_text(const Sweep& sweep, const std::vector<std::size_t>& value_index);
// A request's label: assignment_text, or for an ablation arm "ablate: all_but blocks.0.mlp_fc".
std::string request_label(const Sweep& sweep, const RequestedCombination& request);
// What `fp8lab sweep FILE --dry-run` prints: counts, the distinct runs, and every requested
// combination with the run that stands for it and why.
std::string format_dry_run(const SweepExpansion& expansion);
// The recipe fields whose value differs between the expansion's runs (after canonicalization), in
// recipe_field_names() order: what a report's heatmap can be drawn over.
std::vector<std::string> varied_fields(const SweepExpansion& expansion);

}  // namespace fp8lab::recipes
