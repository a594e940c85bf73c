#include "recipes/schedule.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "recipes/detail/recipe_mapping.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/fields.hpp"
#include "recipes/optimizer_states.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {
namespace {

const char* const kAccepted =
    "a list of at least two stages, each {until: FRACTION, recipe: {...}}, "
    "{until_step: STEP, recipe: {...}} or {until_signal: SIGNAL, recipe: {...}} (SIGNAL "
    "{underflow_above: FRACTION} or {grad_noise_below: RATIO, every: STEPS, consecutive: COUNT}) "
    "and the last "
    "{recipe: {...}} or {recipe: high_precision}, "
    "e.g. [{until: 0.82, recipe: {scaling: nvfp4}}, {recipe: high_precision}]";

std::string stage_name(const std::shared_ptr<const Recipe>& recipe) {
  if (!recipe) return std::string(kHighPrecisionStage);
  std::string out(name(recipe->scaling));
  // Appends (not operator+ chains): GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  if (!subbyte_element_format(recipe->scaling)) out.append(" ").append(name(recipe->fp8_format));
  return out;
}

const char* const kSignalAccepted =
    "{underflow_above: F}, F a fraction in (0, 1) of the stage's quantized elements, or "
    "{grad_noise_below: R}, optionally with every: N and consecutive: K, R > 0 the "
    "gradient-to-noise ratio ||g|| / ||g_q - g|| below which the stage ends (Chmiel et al.'s "
    "sqrt(3) = 1.732), measured on the stage's first step and every N-th after it (N >= 1, default "
    "10), ending the stage once K measurements in a row are below R (K >= 1, default 1)";

// until_signal's mapping: {underflow_above: F} or {grad_noise_below: R[, every: N][, consecutive:
// K]}, into `s`.
void parse_signal(const YAML::Node& v, const std::string& file, const std::string& display,
                  ScheduleStart& s) {
  const Site site = detail::site_of(file, v);
  if (!v.IsMap() || v.size() == 0) {
    throw RecipeError(site, display, detail::describe_node(v), "expected", kSignalAccepted);
  }
  const std::vector<std::string> keys{"underflow_above", "grad_noise_below", "every",
                                      "consecutive"};
  // every or consecutive, given: grad_noise_below's only.
  std::optional<YAML::Node> grad_noise_key;
  for (const auto& item : v) {
    const std::string key = item.first.Scalar();
    const std::string field = display + "." + key;
    const Site value_site = detail::site_of(file, item.second);
    if (key == "underflow_above") {
      s.underflow_above = detail::as_fraction(item.second, value_site, field, kSignalAccepted, 1.0);
    } else if (key == "grad_noise_below") {
      s.grad_noise_below = detail::as_fraction(item.second, value_site, field, kSignalAccepted,
                                               std::numeric_limits<double>::infinity());
    } else if (key == "every" || key == "consecutive") {
      grad_noise_key = item.first;
      const char* const accepted = key == "every"
                                       ? "an integer >= 1 (steps between two measurements)"
                                       : "an integer >= 1 (measurements in a row below the ratio)";
      const std::int64_t n = detail::as_int(item.second, value_site, field, accepted);
      if (n < 1)
        throw RecipeError(value_site, field, item.second.Scalar(), "out of range:", accepted);
      (key == "every" ? s.every : s.consecutive) = n;
    } else {
      throw RecipeError(detail::site_of(file, item.first), field, "", "unknown signal key",
                        kSignalAccepted, did_you_mean(key, keys));
    }
  }
  if (s.underflow_above > 0 && s.grad_noise_below > 0) {
    throw RecipeError(site, display, detail::describe_node(v),
                      "gives two signals (a stage ends on one):", kSignalAccepted);
  }
  if (s.underflow_above == 0 && s.grad_noise_below == 0) {
    throw RecipeError(site, display, detail::describe_node(v), "names no signal:", kSignalAccepted);
  }
  if (grad_noise_key && s.underflow_above > 0) {
    throw RecipeError(detail::site_of(file, *grad_noise_key),
                      display + "." + grad_noise_key->Scalar(), "",
                      "is for grad_noise_below only (the underflow fraction is read on every "
                      "step, and its first crossing ends the stage):",
                      kSignalAccepted);
  }
  if (s.grad_noise_below > 0 && s.every == 0) s.every = kDefaultGradNoiseEvery;
  if (s.grad_noise_below > 0 && s.consecutive == 0) s.consecutive = kDefaultGradNoiseConsecutive;
}

// "whose pooled underflow fraction exceeds F", "whose ... gradient-to-noise ratio ... is below R"
// or, with consecutive K > 1, "that ends K measured steps in a row whose ... is below R".
std::string signal_text(const ScheduleStart& s) {
  if (s.grad_noise_below > 0) {
    return fmt::format("{}whose whole-model gradient-to-noise ratio ||g|| / ||g_q - g|| (measured "
                       "on the stage's first step and every {} after it) is below {}",
                       names_consecutive(s)
                           ? fmt::format("that ends {} measured steps in a row ", s.consecutive)
                           : std::string(),
                       s.every, s.grad_noise_below);
  }
  return fmt::format("whose pooled underflow fraction exceeds {}", s.underflow_above);
}

}  // namespace

bool operator==(const ScheduleStage& a, const ScheduleStage& b) {
  if (!(a.start == b.start)) return false;
  if (!a.recipe || !b.recipe) return !a.recipe && !b.recipe;
  return *a.recipe == *b.recipe;
}

Recipe parse_schedule(const YAML::Node& node, const std::vector<FieldSetting>& base,
                      Strictness strictness, const std::string& file, const std::string& field) {
  const Site site = detail::site_of(file, node);
  if (!node.IsSequence() || node.size() < 2) {
    throw RecipeError(site, field, detail::describe_node(node),
                      node.IsSequence() ? "needs at least two stages, got" : "expected a list, got",
                      kAccepted);
  }
  Recipe first;
  // Which key ends the stages: one kind per schedule.
  enum class EndKind { kFraction, kStep, kSignal };
  const auto key_of = [](EndKind k) {
    return k == EndKind::kFraction ? "until" : k == EndKind::kStep ? "until_step" : "until_signal";
  };
  bool kind_known = false;
  EndKind kind = EndKind::kFraction;
  ScheduleStart next_start;  // where the entry being read starts (entry 0: step 0)
  double last_fraction = 0.0;
  std::int64_t last_step = 0;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& entry = node[i];
    const std::string at = fmt::format("{}[{}]", field, i);
    const Site entry_site = detail::site_of(file, entry);
    if (!entry.IsMap()) {
      throw RecipeError(entry_site, at, detail::describe_node(entry), "expected a mapping, got",
                        kAccepted);
    }
    bool has_recipe = false;
    std::shared_ptr<const Recipe> recipe;
    std::optional<ScheduleStart> until;
    for (const auto& item : entry) {
      const std::string key = item.first.Scalar();
      const YAML::Node& v = item.second;
      const std::string display = at + "." + key;
      const Site key_site = detail::site_of(file, v.IsNull() ? item.first : v);
      if (key == "recipe") {
        has_recipe = true;
        if (v.IsScalar() && v.Scalar() == kHighPrecisionStage) {
          if (i == 0) {
            throw RecipeError(key_site, display, v.Scalar(),
                              "cannot be the first stage (a run starts with an FP8 recipe; the "
                              "high-precision run is the baseline):",
                              "a mapping of recipe fields");
          }
          continue;
        }
        if (!v.IsMap()) {
          throw RecipeError(
              key_site, display, detail::describe_node(v), "expected",
              "a mapping of recipe fields or high_precision",
              did_you_mean(v.IsScalar() ? v.Scalar() : "", {std::string(kHighPrecisionStage)}));
        }
        std::vector<FieldSetting> settings = base;
        for (auto& s : detail::parse_recipe_mapping(v, file, display + ".")) {
          settings.push_back(std::move(s));
        }
        recipe = std::make_shared<const Recipe>(resolve(settings, strictness));
      } else if (key == "until" || key == "until_step" || key == "until_signal") {
        if (until) {
          throw RecipeError(key_site, display, "",
                            "is given with another of until / until_step / until_signal:",
                            "one of until (a fraction of the run), until_step (a step) or "
                            "until_signal (a measured signal)");
        }
        ScheduleStart s;
        s.is_fraction = key == "until";
        const EndKind this_kind = s.is_fraction         ? EndKind::kFraction
                                  : key == "until_step" ? EndKind::kStep
                                                        : EndKind::kSignal;
        if (this_kind == EndKind::kSignal) {
          s.on_signal = true;
          parse_signal(v, file, display, s);
        } else if (s.is_fraction) {
          s.fraction = detail::as_fraction(v, key_site, display, "a fraction in (0, 1)", 1.0);
        } else {
          s.step = detail::as_int(v, key_site, display, "an integer >= 1");
          if (s.step < 1)
            throw RecipeError(key_site, display, v.Scalar(), "out of range:", "an integer >= 1");
        }
        if (kind_known && this_kind != kind) {
          throw RecipeError(
              key_site, display, v.IsScalar() ? v.Scalar() : "",
              "mixes until, until_step and until_signal in one schedule:",
              std::string("the same key as the earlier stages (") + key_of(kind) + ")");
        }
        kind_known = true;
        kind = this_kind;
        // Signal stages end one after the other, each on its own stage's measurements.
        if (!s.on_signal && (s.is_fraction ? s.fraction <= last_fraction : s.step <= last_step)) {
          throw RecipeError(key_site, display, v.Scalar(), "is not after the previous stage's end:",
                            "values that increase from stage to stage");
        }
        last_fraction = s.fraction;
        last_step = s.step;
        until = s;
      } else {
        throw RecipeError(detail::site_of(file, item.first), display, "", "unknown schedule key",
                          "until, until_step, until_signal, recipe",
                          did_you_mean(key, {"until", "until_step", "until_signal", "recipe"}));
      }
    }
    if (!has_recipe) {
      throw RecipeError(entry_site, at + ".recipe", "",
                        "is missing:", "a mapping of recipe fields or high_precision");
    }
    const bool last = i + 1 == node.size();
    if (last && until) {
      throw RecipeError(entry_site, at, detail::describe_node(entry),
                        "is the last stage, which runs to the end: no until / until_step / "
                        "until_signal;",
                        "{recipe: ...} alone");
    }
    if (!last && !until) {
      throw RecipeError(entry_site, at + ".until", "",
                        "is missing (every stage but the last ends):",
                        "until: a fraction in (0, 1), until_step: an integer >= 1, or "
                        "until_signal: {underflow_above: a fraction in (0, 1)} or "
                        "{grad_noise_below: a ratio > 0[, every: N][, consecutive: K]}");
    }
    if (!recipe && until && until->on_signal) {
      throw RecipeError(entry_site, at + ".until_signal", "",
                        "ends a high_precision stage, which quantizes nothing, so its underflow "
                        "never rises and its gradient is the exact one (no noise to fall below):",
                        "until_signal on stages with an FP8 recipe; until or until_step here");
    }
    if (recipe) {
      const std::string problem =
          recipe->autoswitch.enabled  ? "autoswitch, which switches on its own, cannot be a stage:"
          : !recipe->schedule.empty() ? "a stage cannot have its own schedule:"
          : (i > 0 && !(recipe->module_filter == first.module_filter))
              ? "a stage's module_filter must be the first stage's (the run converts its Linears "
                "once); set module_filter the same in every stage, or in base:"
          : (i > 0 && recipe->use_autocast_during_eval != first.use_autocast_during_eval)
              ? "use_autocast_during_eval must be the same in every stage:"
          : (i > 0 && !(canonical_optimizer_states(recipe->optimizer_states, nullptr) ==
                        canonical_optimizer_states(first.optimizer_states, nullptr)))
              ? "optimizer_states and master_weights must be the same in every stage (the run "
                "builds one AdamW, whose stored moments keep their precision for the whole run, "
                "as COAT's CoatAdamW fixes its states' dtypes when it creates them); set them in "
                "base, not in a stage:"
              : "";
      if (!problem.empty()) {
        throw RecipeError(entry_site, at + ".recipe", "", problem,
                          "a stage recipe without autoswitch or schedule, with the first stage's "
                          "module_filter, use_autocast_during_eval, optimizer_states and "
                          "master_weights");
      }
    }
    if (i == 0) {
      first = *recipe;
    } else {
      const auto& previous = first.schedule.empty() ? std::make_shared<const Recipe>(first)
                                                    : first.schedule.back().recipe;
      if (recipe && previous && previous->scaling == Scaling::delayed &&
          recipe->scaling == Scaling::delayed) {
        throw RecipeError(entry_site, at + ".recipe", "delayed",
                          "follows a delayed stage: TE keeps that amax history (module/base.py, "
                          "adjust_amax_history_length), which fp8lab does not model;",
                          "a stage of another scaling between two delayed stages");
      }
      first.schedule.push_back({next_start, recipe});
    }
    if (until) next_start = *until;
  }
  return first;
}

std::int64_t stage_start_step(const ScheduleStart& start, std::int64_t steps_planned) {
  if (start.on_signal) {
    throw std::logic_error("stage_start_step: a signal stage's start is known only in the run");
  }
  if (!start.is_fraction) return start.step;
  return std::llround(start.fraction * static_cast<double>(steps_planned));
}

std::string start_text(const ScheduleStart& start) {
  if (start.on_signal && start.grad_noise_below > 0) {
    return fmt::format("grad/noise below {} every {} steps{}", start.grad_noise_below, start.every,
                       names_consecutive(start)
                           ? fmt::format(", {} measurements in a row", start.consecutive)
                           : std::string());
  }
  if (start.on_signal) return fmt::format("underflow above {}", start.underflow_above);
  return start.is_fraction ? fmt::format("{}", start.fraction) : fmt::format("step {}", start.step);
}

std::vector<StageView> schedule_stages(const Recipe& recipe) {
  Recipe first = recipe;
  first.schedule.clear();
  std::vector<StageView> stages{
      {ScheduleStart{false, 0.0, 0}, std::make_shared<const Recipe>(first)}};
  for (const auto& s : recipe.schedule) stages.push_back({s.start, s.recipe});
  return stages;
}

std::string schedule_text(const Recipe& recipe) {
  std::string out;
  for (const auto& s : recipe.schedule) {
    out += fmt::format("{{from={}:{}}}",
                       s.start.on_signal && s.start.grad_noise_below > 0
                           ? fmt::format("gnr<{}every{}{}", s.start.grad_noise_below, s.start.every,
                                         names_consecutive(s.start)
                                             ? fmt::format("consecutive{}", s.start.consecutive)
                                             : std::string())
                       : s.start.on_signal   ? fmt::format("underflow>{}", s.start.underflow_above)
                       : s.start.is_fraction ? fmt::format("{}", s.start.fraction)
                                             : fmt::format("step{}", s.start.step),
                       s.recipe ? canonical_string(*s.recipe) : std::string(kHighPrecisionStage));
  }
  return out;
}

std::string describe_schedule(const Recipe& recipe) {
  const auto stages = schedule_stages(recipe);
  std::string out = fmt::format("schedule: {} stages (each converted Linear takes the next stage's "
                                "recipe and a fresh scaling "
                                "state at the stage's first step)\n",
                                stages.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& s = stages[i];
    const std::string from =
        i == 0              ? "step 0"
        : s.start.on_signal ? fmt::format("the step after the first step {}", signal_text(s.start))
        : s.start.is_fraction ? fmt::format("{} of the steps", s.start.fraction)
                              : fmt::format("step {}", s.start.step);
    const std::string until =
        i + 1 == stages.size() ? "the end"
        : stages[i + 1].start.on_signal
            ? fmt::format("the first step {}", signal_text(stages[i + 1].start))
        : stages[i + 1].start.is_fraction
            ? fmt::format("{} of the steps", stages[i + 1].start.fraction)
            : fmt::format("step {}", stages[i + 1].start.step);
    out += fmt::format("  stage {}: from {} to {}: {}\n", i, from, until,
                       s.recipe ? (i == 0 ? stage_name(s.recipe) : canonical_string(*s.recipe))
                                : "high_precision (every GEMM of the converted Linears in the "
                                  "baseline's precision)");
  }
  return out;
}

std::string schedule_label(const Recipe& recipe) {
  const auto stages = schedule_stages(recipe);
  std::string out = stage_name(stages.front().recipe);
  for (std::size_t i = 1; i < stages.size(); ++i) {
    out += fmt::format(" until {}, then {}", start_text(stages[i].start),
                       stage_name(stages[i].recipe));
  }
  return out;
}

}  // namespace fp8lab::recipes
