#include "recipes/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "recipes/canonical.hpp"
#include "recipes/detail/field_parse.hpp"
#include "recipes/detail/hypotheses_yaml.hpp"
#include "recipes/detail/instability_yaml.hpp"
#include "recipes/detail/recipe_mapping.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/text_file.hpp"
#include "recipes/utf8.hpp"
#include "recipes/what_if.hpp"

namespace fp8lab::recipes {
namespace {

const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> keys = {"method",
                                                "count",
                                                "seed",
                                                "workloads",
                                                "seeds",
                                                "base",
                                                "parameters",
                                                "name",
                                                "description",
                                                "runs_as",
                                                "baseline_seeds",
                                                "practical_band",
                                                "null_runs",
                                                "layer_stats_every",
                                                "what_if",
                                                "ablate",
                                                "hypotheses",
                                                "instability",
                                                "null_noise",
                                                "seed_budget",
                                                "probes",
                                                "probe_every",
                                                "probe_attribution",
                                                "probe_draws",
                                                "probe_seeds",
                                                "schedules"};
  return keys;
}
// practical_band: a fraction in (0, 1), e.g. 0.0025 for 0.25%.
double parse_band(const YAML::Node& v, const Site& site, const std::string& key) {
  return detail::as_fraction(v, site, key, "a fraction in (0, 1), e.g. 0.0025 for a 0.25% band",
                             1.0);
}

std::string joined(const std::vector<std::string>& words) {
  return fmt::format("{}", fmt::join(words, ", "));
}

std::vector<FieldSetting> parse_values(const std::string& key, const YAML::Node& spec,
                                       const std::string& file) {
  const std::string field = "parameters." + key;
  if (!spec.IsMap()) {
    throw RecipeError(detail::site_of(file, spec), field, detail::describe_node(spec),
                      "expected a mapping with values: [...] or value: x, got", "values, value");
  }
  std::vector<FieldSetting> values;
  for (const auto& entry : spec) {
    const std::string what = entry.first.Scalar();
    const YAML::Node& node = entry.second;
    if (what == "value") {
      values.push_back(
          detail::parse_field(key, node, detail::site_of(file, node), field + ".value"));
    } else if (what == "values") {
      if (!node.IsSequence() || node.size() == 0) {
        throw RecipeError(detail::site_of(file, node), field + ".values",
                          detail::describe_node(node), "expected a non-empty list, got",
                          "a list of values of " + key);
      }
      for (std::size_t i = 0; i < node.size(); ++i) {
        values.push_back(detail::parse_field(key, node[i], detail::site_of(file, node[i]),
                                             fmt::format("{}.values[{}]", field, i)));
      }
    } else {
      throw RecipeError(detail::site_of(file, entry.first), field + "." + what, "",
                        "is not supported (only explicit value lists)", "values, value",
                        did_you_mean(what, {"values", "value"}));
    }
  }
  if (values.empty()) {
    throw RecipeError(detail::site_of(file, spec), field, "", "has no values", "values, value");
  }
  return values;
}

// seeds: [0, 1] and baseline_seeds: [0, 1, 2]: a non-empty list of integers, each named as
// key[i] in messages; `distinct` refuses one given twice (baseline_seeds: a repeated seed would
// count its noise twice).
std::vector<std::int64_t> parse_int_list(const std::string& key, const YAML::Node& v,
                                         const Site& site, const std::string& file, bool distinct) {
  if (!v.IsSequence() || v.size() == 0) {
    throw RecipeError(site, key, v.IsSequence() ? "[]" : detail::describe_node(v),
                      "expected a non-empty list, got",
                      distinct ? "a list of distinct integers, e.g. [0, 1, 2]"
                               : "a list of integers, e.g. [0, 1]");
  }
  std::vector<std::int64_t> values;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Site item_site = detail::site_of(file, v[i]);
    const std::string field = fmt::format("{}[{}]", key, i);
    const std::int64_t value = detail::as_int(v[i], item_site, field, "integers");
    if (distinct && std::find(values.begin(), values.end(), value) != values.end()) {
      throw RecipeError(item_site, field, std::to_string(value),
                        "is given twice:", "distinct integers, e.g. [0, 1, 2]");
    }
    values.push_back(value);
  }
  return values;
}

// seed_budget: the most seeds one row runs under seeds: auto, its pilot's included.
std::int64_t parse_seed_budget(const YAML::Node& v, const Site& site, const std::string& key) {
  const std::string accepted =
      fmt::format("the most seeds one row runs with seeds: auto, pilot included: an integer from "
                  "{} to {}",
                  kPilotSeeds, kMaxSeedBudget);
  const std::int64_t budget = detail::as_int(v, site, key, accepted);
  if (budget < kPilotSeeds || budget > kMaxSeedBudget) {
    throw RecipeError(site, key, std::to_string(budget), "out of range:", accepted);
  }
  return budget;
}

// seeds: auto and seed_budget come together (sweep.hpp, SeedPlanning).
void check_seed_planning(Sweep& sweep, const Site& seeds_site, const Site& budget_site) {
  const auto& planning = sweep.seed_planning;
  if (planning.automatic && budget_site.line == 0) {
    throw RecipeError(seeds_site, "seed_budget", "", "is required by seeds: auto",
                      fmt::format("seed_budget: N, the most seeds one row runs, pilot included "
                                  "(an integer from {} to {})",
                                  kPilotSeeds, kMaxSeedBudget));
  }
  if (!planning.automatic && budget_site.line > 0) {
    throw RecipeError(budget_site, "seed_budget", std::to_string(planning.budget),
                      "applies to seeds: auto only:", "seeds: auto with seed_budget, or remove it");
  }
  if (planning.automatic && sweep.method == SweepMethod::ablate) {
    throw RecipeError(seeds_site, "seeds", "auto", "applies to method: grid or random only:",
                      "a list of seeds with method: ablate");
  }
  if (planning.automatic) {
    sweep.seeds.clear();
    for (std::int64_t s = 0; s < kPilotSeeds; ++s) sweep.seeds.push_back(s);
  }
}

// what_if: a list of distinct what-if recipe names (what_if.hpp), each checked here.
std::vector<std::string> parse_what_if(const std::string& key, const YAML::Node& v,
                                       const Site& site, const std::string& file) {
  if (!v.IsSequence() || v.size() == 0) {
    throw RecipeError(site, key, v.IsSequence() ? "[]" : detail::describe_node(v),
                      "expected a non-empty list, got",
                      "a list of " + accepted_what_if_names() + ", e.g. [mxfp8, block]");
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Site item_site = detail::site_of(file, v[i]);
    const std::string field = fmt::format("{}[{}]", key, i);
    const std::string name = detail::as_scalar(v[i], item_site, field, accepted_what_if_names());
    what_if_recipe(name, item_site, field);
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw RecipeError(item_site, field, name, "is given twice:", accepted_what_if_names());
    }
    names.push_back(name);
  }
  return names;
}

// probes: a non-empty list of distinct probe recipes, each a probe word or a mapping of recipe
// fields (probe_settings.hpp), kept as probe words.
std::vector<std::string> parse_probes(const std::string& key, const YAML::Node& v, const Site& site,
                                      const std::string& file) {
  const std::string accepted =
      "a list of probe recipes, each SCALING[:FIELD=VALUE...] or a mapping of recipe fields, "
      "e.g. [current, {scaling: current, fp8_format: E5M2}]";
  if (!v.IsSequence() || v.size() == 0) {
    throw RecipeError(site, key, v.IsSequence() ? "[]" : detail::describe_node(v),
                      "expected a non-empty list, got", accepted);
  }
  std::vector<std::string> words;
  std::vector<std::string> canonical;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Site item_site = detail::site_of(file, v[i]);
    const std::string field = fmt::format("{}[{}]", key, i);
    const std::string word = v[i].IsMap()
                                 ? probe_word(detail::parse_recipe_mapping(v[i], file, field + "."))
                                 : detail::as_scalar(v[i], item_site, field, accepted);
    const std::string canonical_text = canonical_string(probe_recipe(word, item_site, field));
    if (std::find(canonical.begin(), canonical.end(), canonical_text) != canonical.end()) {
      throw RecipeError(item_site, field, word, "is given twice (the same recipe):", accepted);
    }
    canonical.push_back(canonical_text);
    words.push_back(word);
  }
  return words;
}

// null_runs: true (= [once]), false (none) or a non-empty list of distinct arm names.
std::vector<NullArm> parse_null_runs(const std::string& key, const YAML::Node& v, const Site& site,
                                     const std::string& file) {
  const std::string accepted = "true, false, or a list of " + accepted_null_arms() +
                               ", e.g. [once, per_step]";
  if (v.IsScalar()) {
    if (v.Scalar() != "true" && v.Scalar() != "false") {
      throw RecipeError(site, key, v.Scalar(), "expected a boolean or a list, got", accepted);
    }
    return detail::as_bool(v, site, key) ? std::vector<NullArm>{NullArm::once}
                                         : std::vector<NullArm>{};
  }
  if (!v.IsSequence() || v.size() == 0) {
    throw RecipeError(site, key, v.IsSequence() ? "[]" : detail::describe_node(v),
                      "expected a boolean or a non-empty list, got", accepted);
  }
  std::vector<NullArm> arms;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Site item_site = detail::site_of(file, v[i]);
    const std::string field = fmt::format("{}[{}]", key, i);
    const std::string name = detail::as_scalar(v[i], item_site, field, accepted_null_arms());
    const auto arm = null_arm_named(name);
    if (!arm) {
      throw RecipeError(item_site, field, name, "unknown null arm", accepted_null_arms(),
                        did_you_mean(name, {"once", "per_step"}));
    }
    if (std::find(arms.begin(), arms.end(), *arm) != arms.end()) {
      throw RecipeError(item_site, field, name, "is given twice:", accepted_null_arms());
    }
    arms.push_back(*arm);
  }
  return arms;
}

SweepMethod parse_method(const YAML::Node& v, const Site& site, const std::string& key) {
  const std::string m = detail::as_scalar(v, site, key, "grid, random, ablate");
  if (m != "grid" && m != "random" && m != "ablate") {
    throw RecipeError(site, key, m, "unknown value", "grid, random, ablate",
                      did_you_mean(m, {"grid", "random", "ablate"}));
  }
  return m == "grid"     ? SweepMethod::grid
         : m == "random" ? SweepMethod::random
                         : SweepMethod::ablate;
}

// ablate: {layers: [names], per_gemm: bool}
Ablation parse_ablation(const YAML::Node& v, const Site& site, const std::string& file) {
  const std::string accepted = "a mapping with layers (a list of Linear names) and per_gemm";
  if (!v.IsMap()) throw RecipeError(site, "ablate", detail::describe_node(v), "expected", accepted);
  Ablation a;
  a.site = site;
  for (const auto& entry : v) {
    const std::string key = entry.first.Scalar();
    const Site at = detail::site_of(file, entry.second.IsNull() ? entry.first : entry.second);
    if (key == "layers") {
      if (!entry.second.IsSequence()) {
        throw RecipeError(at, "ablate.layers", detail::describe_node(entry.second),
                          "wrong type: expected a list, got", "a list of Linear names");
      }
      for (const auto& item : entry.second) {
        a.layers.push_back(
            detail::as_scalar(item, detail::site_of(file, item), "ablate.layers", "Linear names"));
      }
    } else if (key == "per_gemm") {
      a.per_gemm = detail::as_bool(entry.second, at, "ablate.per_gemm");
    } else {
      throw RecipeError(detail::site_of(file, entry.first), "ablate." + key, "", "unknown key",
                        "layers, per_gemm", did_you_mean(key, {"layers", "per_gemm"}));
    }
  }
  return a;
}

std::int64_t parse_count(const YAML::Node& v, const Site& site, const std::string& key) {
  const std::int64_t count = detail::as_int(v, site, key, "an integer >= 1");
  if (count < 1 || static_cast<std::uint64_t>(count) > kMaxRequested) {
    throw RecipeError(site, key, std::to_string(count),
                      "out of range:", fmt::format("an integer from 1 to {}", kMaxRequested));
  }
  return count;
}

// A workloads: entry written as a mapping, {llama-s: {d_model: 384}}: the spec text
// "llama-s:d_model=384" (experiments/workloads/workload_options.hpp checks the options).
std::string workload_with_options(const YAML::Node& item, const std::string& file,
                                  const std::string& key) {
  const Site site = detail::site_of(file, item);
  const char* accepted = "a workload name, or {name: {option: value, ...}}";
  if (item.size() != 1) {
    throw RecipeError(site, key, detail::describe_node(item), "expected one workload, got",
                      accepted);
  }
  // Copies, not references: a yaml-cpp iterator's -> yields a temporary proxy, so a range-for
  // over entry->second would walk a node that died with it (ASan: stack-use-after-scope).
  const auto entry = item.begin();
  const YAML::Node name_node = entry->first;
  const YAML::Node options = entry->second;
  std::string spec = detail::as_scalar(name_node, site, key, accepted);
  if (!options.IsMap()) {
    throw RecipeError(detail::site_of(file, options), key + "." + spec,
                      detail::describe_node(options), "expected a mapping, got",
                      "workload options as {option: value, ...}");
  }
  char separator = ':';
  for (const auto& option : options) {
    const std::string name = detail::as_scalar(option.first, site, key + "." + spec, accepted);
    spec.append(1, separator)
        .append(name)
        .append("=")
        .append(detail::as_scalar(option.second, detail::site_of(file, option.second),
                                  key + "." + spec + "." + name, "a number, true/false or a word"));
    separator = ',';
  }
  return spec;
}

std::vector<std::string> parse_workloads(const YAML::Node& v, const Site& site,
                                         const std::string& file, const std::string& key) {
  if (!v.IsSequence() || v.size() == 0) {
    throw RecipeError(site, key, detail::describe_node(v), "expected a non-empty list, got",
                      "a list of workload names, e.g. [gpt-small]");
  }
  std::vector<std::string> workloads;
  for (const auto& item : v) {
    const Site item_site = detail::site_of(file, item);
    workloads.push_back(item.IsMap() ? workload_with_options(item, file, key)
                                     : detail::as_scalar(item, item_site, key, "workload names"));
  }
  return workloads;
}

// parameters: each a recipe field, once, with its values (parse_values).
std::vector<SweepParameter> parse_parameters(const YAML::Node& v, const Site& site,
                                             const std::string& file, const std::string& key) {
  if (!v.IsMap()) {
    throw RecipeError(site, key, detail::describe_node(v), "expected a mapping, got",
                      "recipe fields, each with values: [...]");
  }
  std::vector<SweepParameter> parameters;
  std::set<std::string> seen;
  for (const auto& param : v) {
    const std::string field = param.first.Scalar();
    if (!is_recipe_field(field)) {
      throw RecipeError(detail::site_of(file, param.first), "parameters." + field, "",
                        "unknown recipe field", all_field_names(),
                        did_you_mean(field, recipe_field_names()));
    }
    if (!seen.insert(field).second) {
      throw RecipeError(detail::site_of(file, param.first), "parameters." + field, "",
                        "is given twice", "one entry per field");
    }
    parameters.push_back({field, parse_values(field, param.second, file)});
  }
  return parameters;
}

// count and seed belong to method: random, which needs a count; ablate ablates one recipe (the
// base) on one workload, and its key belongs to it.
void check_method_keys(const Sweep& sweep, bool has_count, bool has_seed, const Site& method_site) {
  if (sweep.method == SweepMethod::random && !has_count) {
    throw RecipeError(method_site, "count", "", "is required by method: random", "an integer >= 1");
  }
  if (sweep.method != SweepMethod::random && (has_count || has_seed)) {
    throw RecipeError(method_site, has_count ? "count" : "seed", "",
                      "applies to method: random only", "method: random, or remove it");
  }
}
// hypotheses: its labels against the parameters, its band against practical_band (one band per
// sweep: the hypotheses' sets it when practical_band is not given), none for method: ablate.
void check_sweep_hypotheses(Sweep& sweep, bool has_band) {
  auto& h = sweep.hypotheses;
  if (!h.given) return;
  if (sweep.method == SweepMethod::ablate) {
    throw RecipeError(h.site, "hypotheses", "", "applies to method: grid or random only",
                      "method: grid or random, or remove it");
  }
  if (h.has_band) {
    if (has_band && h.band != sweep.practical_band) {
      throw RecipeError(h.site, "hypotheses.band", fmt::format("{}", h.band),
                        fmt::format("differs from practical_band {}:", sweep.practical_band),
                        "the same band in both, or only one of them");
    }
    sweep.practical_band = h.band;
  }
  std::vector<LabelParameter> parameters;
  for (const auto& p : sweep.parameters) {
    LabelParameter label{p.key, {}};
    for (const auto& v : p.values) label.values.push_back(field_text(v.value));
    parameters.push_back(std::move(label));
  }
  check_hypotheses(h, parameters);
}

// schedules: a non-empty list of {schedule: [...]} (schedule.hpp), each read over `base`.
std::vector<Recipe> parse_sweep_schedules(const Sweep& sweep, const YAML::Node& v) {
  const std::string accepted = "a list of {schedule: [...]}, e.g. [{schedule: [{until: 0.82, "
                               "recipe: {scaling: nvfp4}}, {recipe: high_precision}]}]";
  const Site site = detail::site_of(sweep.file, v);
  if (!v.IsSequence() || v.size() == 0) {
    throw RecipeError(site, "schedules", v.IsSequence() ? "[]" : detail::describe_node(v),
                      "expected a non-empty list, got", accepted);
  }
  if (sweep.method == SweepMethod::ablate || sweep.runs_as == RunsAs::upstream) {
    throw RecipeError(site, "schedules", "",
                      sweep.method == SweepMethod::ablate
                          ? "cannot be used with method: ablate;"
                          : "cannot be used with runs_as: upstream;",
                      "schedules with method grid or random and runs_as asked");
  }
  if (!sweep.probes.recipes.empty()) {
    // An FP8 run's exact-step probe builds the run's recipe once: it would go on probing the
    // first stage after a switch.
    throw RecipeError(site, "schedules", "", "cannot be used with probes (not built);",
                      "schedules in a sweep without probes");
  }
  std::vector<Recipe> out;
  std::vector<std::string> canonical;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string field = fmt::format("schedules[{}]", i);
    const YAML::Node& item = v[i];
    if (!item.IsMap() || item.size() != 1 || !item["schedule"]) {
      throw RecipeError(detail::site_of(sweep.file, item), field, detail::describe_node(item),
                        "expected a mapping with the one key schedule, got", accepted);
    }
    Recipe recipe = parse_schedule(item["schedule"], sweep.base, Strictness::sweep, sweep.file,
                                   field + ".schedule");
    const std::string text = canonical_string(canonicalize(recipe).recipe);
    if (std::find(canonical.begin(), canonical.end(), text) != canonical.end()) {
      throw RecipeError(detail::site_of(sweep.file, item), field, "",
                        "is given twice (the same schedule):", "distinct schedules");
    }
    canonical.push_back(text);
    out.push_back(std::move(recipe));
  }
  return out;
}

}  // namespace
Sweep parse_sweep_text(const std::string& text, const std::string& file) {
  const YAML::Node root = detail::load_yaml_text(text, file);
  detail::reject_empty_document(root, file, "sweep", joined(top_level_keys()));
  detail::reject_duplicate_keys(root, file);
  if (!root.IsMap()) {
    throw RecipeError({file, detail::line_of(root)}, "sweep", detail::describe_node(root),
                      "expected a mapping, got", joined(top_level_keys()));
  }
  Sweep sweep;
  sweep.file = file;
  bool has_count = false, has_seed = false, has_ablate = false, has_band = false;
  bool has_probe_every = false;
  Site method_site{file, 0};
  Site null_noise_site{file, 0};  // line 0: null_noise not given
  Site seeds_site{file, 0}, budget_site{file, 0}, probe_seeds_site{file, 0};
  YAML::Node schedules;  // read after the loop, over `base` wherever it is in the file
  bool has_schedules = false;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& v = entry.second;
    const Site site = detail::site_of(file, v.IsNull() ? entry.first : v);
    if (key == "method") {
      method_site = site;
      sweep.method = parse_method(v, site, key);
    } else if (key == "count") {
      has_count = true;
      sweep.count = parse_count(v, site, key);
    } else if (key == "seed") {
      has_seed = true;
      sweep.seed = static_cast<std::uint64_t>(detail::as_int(v, site, key, "an integer"));
    } else if (key == "workloads") {
      for (auto& workload : parse_workloads(v, site, file, key)) {
        sweep.workloads.push_back(std::move(workload));
      }
    } else if (key == "seeds") {
      seeds_site = site;
      if (v.IsScalar() && v.Scalar() == "auto") {
        sweep.seed_planning.automatic = true;
      } else if (v.IsScalar()) {
        throw RecipeError(site, key, v.Scalar(), "expected a list or auto, got",
                          "a list of integers, e.g. [0, 1], or auto (with seed_budget)",
                          did_you_mean(v.Scalar(), {"auto"}));
      } else {
        sweep.seeds = parse_int_list(key, v, site, file, false);
      }
    } else if (key == "seed_budget") {
      budget_site = site;
      sweep.seed_planning.budget = parse_seed_budget(v, site, key);
    } else if (key == "baseline_seeds") {
      sweep.baseline_seeds = parse_int_list(key, v, site, file, true);
    } else if (key == "practical_band") {
      has_band = true;
      sweep.practical_band = parse_band(v, site, key);
    } else if (key == "hypotheses") {
      sweep.hypotheses = detail::parse_hypotheses(v, site, file);
    } else if (key == "instability") {
      sweep.instability = detail::parse_instability(v, site, file);
    } else if (key == "null_runs") {
      sweep.null_runs = parse_null_runs(key, v, site, file);
    } else if (key == "null_noise") {
      null_noise_site = site;
      sweep.null_noise = detail::as_scalar(v, site, key, accepted_what_if_names());
      what_if_recipe(sweep.null_noise, site, key);
    } else if (key == "layer_stats_every") {
      sweep.layer_stats_every = detail::as_int(v, site, key, "an integer >= 1");
      if (sweep.layer_stats_every < 1) {
        throw RecipeError(site, key, v.Scalar(), "out of range:", "an integer >= 1");
      }
    } else if (key == "what_if") {
      sweep.what_if = parse_what_if(key, v, site, file);
    } else if (key == "probes") {
      sweep.probes.recipes = parse_probes(key, v, site, file);
      sweep.probes.site = site;
      sweep.probes.field = key;
    } else if (key == "probe_every") {
      has_probe_every = true;
      sweep.probes.every = detail::as_int(v, site, key, "an integer >= 1");
      if (sweep.probes.every < 1) {
        throw RecipeError(site, key, v.Scalar(), "out of range:", "an integer >= 1");
      }
    } else if (key == "probe_attribution") {
      const auto word = detail::as_scalar(v, site, key, accepted_probe_attributions());
      const auto attribution = probe_attribution_named(word);
      if (!attribution) {
        throw RecipeError(site, key, word, "unknown value", accepted_probe_attributions());
      }
      sweep.probes.attribution = *attribution;
    } else if (key == "probe_seeds") {
      probe_seeds_site = site;
      sweep.probes.seeds = parse_int_list(key, v, site, file, true);
    } else if (key == "probe_draws") {
      sweep.probes.draws = detail::as_int(v, site, key, "an integer >= 1");
      if (sweep.probes.draws < 1) {
        throw RecipeError(site, key, v.Scalar(), "out of range:", "an integer >= 1");
      }
    } else if (key == "ablate") {
      has_ablate = true;
      sweep.ablate = parse_ablation(v, site, file);
    } else if (key == "base") {
      sweep.base = detail::parse_recipe_mapping(v, file, "base.");
    } else if (key == "parameters") {
      for (auto& parameter : parse_parameters(v, site, file, key)) {
        sweep.parameters.push_back(std::move(parameter));
      }
    } else if (key == "schedules") {
      has_schedules = true;
      schedules = v;
    } else if (key == "runs_as") {
      sweep.runs_as = parse_runs_as(detail::as_scalar(v, site, key, "asked, upstream"), site, key);
      sweep.runs_as_site = site;
    } else if (key == "name" || key == "description") {
      if (key == "name") sweep.name = detail::as_scalar(v, site, key, "a string");
    } else {
      throw RecipeError(detail::site_of(file, entry.first), key, "", "unknown sweep key",
                        joined(top_level_keys()), did_you_mean(key, top_level_keys()));
    }
  }
  if (has_schedules) sweep.schedules = parse_sweep_schedules(sweep, schedules);
  check_method_keys(sweep, has_count, has_seed, method_site);
  check_seed_planning(sweep, seeds_site, budget_site);
  // A probe seed that no run has would probe nothing: a typo.
  for (std::size_t i = 0; i < sweep.probes.seeds.size(); ++i) {
    const auto seed = sweep.probes.seeds[i];
    const auto has = [seed](const std::vector<std::int64_t>& list) {
      return std::find(list.begin(), list.end(), seed) != list.end();
    };
    if (!sweep.seed_planning.automatic && !has(sweep.seeds) && !has(sweep.baseline_seeds)) {
      throw RecipeError(probe_seeds_site, fmt::format("probe_seeds[{}]", i), std::to_string(seed),
                        "is not a seed of this sweep:", "seeds from `seeds` or `baseline_seeds`");
    }
  }
  // probes without probe_every: the default steps. probe_every alone probes the FP8 runs only
  // (the exact step at each run's own weights).
  if (!sweep.probes.recipes.empty() && !has_probe_every) sweep.probes.every = kDefaultProbeEvery;
  if (null_noise_site.line > 0 && std::find(sweep.null_runs.begin(), sweep.null_runs.end(),
                                            NullArm::per_step) == sweep.null_runs.end()) {
    throw RecipeError(null_noise_site, "null_noise", sweep.null_noise,
                      "sizes the per_step null arm, which null_runs does not list:",
                      "null_runs: [once, per_step] (or [per_step]) with null_noise, or no "
                      "null_noise");
  }
  if (sweep.workloads.empty()) {
    throw RecipeError({file, 0}, "workloads", "", "is required", "a list of workload names");
  }
  if (sweep.method == SweepMethod::ablate) {
    if (!sweep.parameters.empty()) {
      throw RecipeError({file, sweep.parameters.front().values.front().site.line}, "parameters", "",
                        "are not used by method: ablate (it ablates the base recipe)",
                        "the recipe's fields under base, no parameters");
    }
    if (sweep.workloads.size() != 1) {
      throw RecipeError(method_site, "workloads", joined(sweep.workloads),
                        "method: ablate takes one workload (its Linears name the arms), got",
                        "one workload");
    }
  } else if (has_ablate) {
    throw RecipeError(sweep.ablate.site, "ablate", "", "applies to method: ablate only",
                      "method: ablate, or remove it");
  }
  check_sweep_hypotheses(sweep, has_band);
  if (sweep.seeds.empty()) sweep.seeds = {0};
  return sweep;
}

Sweep read_sweep(const std::string& path) { return parse_sweep_text(read_text_file(path), path); }

}  // namespace fp8lab::recipes
