// On-trajectory probes (issue 41): which recipes a baseline run measures at its own weights and
// batches, how often, with which per-GEMM attribution and how many draws of a stochastic recipe;
// and, in every FP8 run, how often the exact step is measured at the run's own weights. The sweep
// keys `probes:`, `probe_every:`, `probe_attribution:`, `probe_draws:` and `fp8lab run --probe`,
// `--probe-every`, `--probe-attribution`, `--probe-draws` (docs/results-schema.md). None of them
// changes a training step, so none is part of a run id (as what_if and layer_stats_every).
//
// A probe recipe is written as one word, the form that both the command line and the sweep file
// read (a sweep file may also give a mapping of recipe fields, turned into this form):
//   SCALING[:FIELD=VALUE...]   e.g. current, current:fp8_format=E5M2, mxfp8:mx_scale_mode=floor,
//                              nvfp4:nvfp4_stochastic_rounding=true,
//                              current:override_linear_precision=[false/true/true]
// A value's list separator is '/' (',' separates the probes of one --probe). No LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/error.hpp"
#include "recipes/fields.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {

// When the three single-GEMM variants of each probed recipe run: at the first, middle and last
// probe step (the default), at every probe step, or never.
enum class ProbeAttribution : std::uint8_t { first_middle_last, all, none };

inline constexpr std::int64_t kDefaultProbeEvery = 10;
inline constexpr std::int64_t kDefaultProbeDraws = 4;

struct ProbeSettings {
  std::vector<std::string> recipes;  // probe words (above), each checked by probe_recipe
  std::int64_t every = 0;            // every n-th step and the last; 0: no probes
  ProbeAttribution attribution = ProbeAttribution::first_middle_last;
  std::int64_t draws = kDefaultProbeDraws;  // per probe step, stochastic recipes only
  // The sweep's probe_seeds: only the runs (baselines, FP8 and null runs) of these seeds probe;
  // empty: every seed. One seed's trajectory resolves what the probes measure (no seed chaos in
  // a paired difference on one trajectory), and delayed scaling's probes run every step.
  std::vector<std::int64_t> seeds;
  Site site;  // where the recipes were given (the sweep file's `probes:`, or --probe)
  std::string field = "--probe";  // how errors name them ("probes" in a sweep file)
};

// The recipe a probe word stands for (Strictness::file: a field its scaling ignores is an
// error). Throws RecipeError at `site` naming `field`: an unknown scaling or field, a bad value,
// and autoswitch (it switches on the run's own losses, which a probe does not have).
Recipe probe_recipe(std::string_view word, const Site& site, const std::string& field);

// The probe word of a sweep file's mapping of recipe fields (scaling first).
std::string probe_word(const std::vector<FieldSetting>& settings);

// Whether the runs of `seed` probe (ProbeSettings::seeds).
bool probes_seed(const ProbeSettings& probes, std::int64_t seed);

std::string probe_attribution_name(ProbeAttribution attribution);
std::optional<ProbeAttribution> probe_attribution_named(std::string_view name);
std::string accepted_probe_attributions();  // "first_middle_last, all, none"

}  // namespace fp8lab::recipes
