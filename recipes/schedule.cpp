#include "recipes/schedule.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <optional>

#include "recipes/detail/recipe_mapping.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/fields.hpp"
#include "recipes/recipe.hpp"

namespace fp8lab::recipes {
namespace {

const char* const kAccepted =
    "a list of at least two stages, each {until: FRACTION, recipe: {...}} or "
    "{until_step: STEP, recipe: {...}} and the last {recipe: {...}} or {recipe: high_precision}, "
    "e.g. [{until: 0.82, recipe: {scaling: nvfp4}}, {recipe: high_precision}]";

std::string stage_name(const std::shared_ptr<const Recipe>& recipe) {
  if (!recipe) return std::string(kHighPrecisionStage);
  std::string out(name(recipe->scaling));
  // Appends (not operator+ chains): GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  if (!subbyte_element_format(recipe->scaling)) out.append(" ").append(name(recipe->fp8_format));
  return out;
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
  bool kind_known = false, by_fraction = true;
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
      } else if (key == "until" || key == "until_step") {
        if (until) {
          throw RecipeError(key_site, display, "", "is given with the other of until / until_step:",
                            "one of until (a fraction of the run) or until_step (a step)");
        }
        ScheduleStart s;
        s.is_fraction = key == "until";
        if (s.is_fraction) {
          s.fraction = detail::as_fraction(v, key_site, display, "a fraction in (0, 1)", 1.0);
        } else {
          s.step = detail::as_int(v, key_site, display, "an integer >= 1");
          if (s.step < 1)
            throw RecipeError(key_site, display, v.Scalar(), "out of range:", "an integer >= 1");
        }
        if (kind_known && s.is_fraction != by_fraction) {
          throw RecipeError(key_site, display, v.Scalar(),
                            "mixes until and until_step in one schedule:",
                            std::string("the same key as the earlier stages (") +
                                (by_fraction ? "until" : "until_step") + ")");
        }
        kind_known = true;
        by_fraction = s.is_fraction;
        if (s.is_fraction ? s.fraction <= last_fraction : s.step <= last_step) {
          throw RecipeError(key_site, display, v.Scalar(), "is not after the previous stage's end:",
                            "values that increase from stage to stage");
        }
        last_fraction = s.fraction;
        last_step = s.step;
        until = s;
      } else {
        throw RecipeError(detail::site_of(file, item.first), display, "", "unknown schedule key",
                          "until, until_step, recipe",
                          did_you_mean(key, {"until", "until_step", "recipe"}));
      }
    }
    if (!has_recipe) {
      throw RecipeError(entry_site, at + ".recipe", "",
                        "is missing:", "a mapping of recipe fields or high_precision");
    }
    const bool last = i + 1 == node.size();
    if (last && until) {
      throw RecipeError(entry_site, at, detail::describe_node(entry),
                        "is the last stage, which runs to the end: no until / until_step;",
                        "{recipe: ...} alone");
    }
    if (!last && !until) {
      throw RecipeError(entry_site, at + ".until", "",
                        "is missing (every stage but the last ends):",
                        "until: a fraction in (0, 1), or until_step: an integer >= 1");
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
              : "";
      if (!problem.empty()) {
        throw RecipeError(entry_site, at + ".recipe", "", problem,
                          "a stage recipe without autoswitch or schedule, with the first stage's "
                          "module_filter and use_autocast_during_eval");
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
  if (!start.is_fraction) return start.step;
  return std::llround(start.fraction * static_cast<double>(steps_planned));
}

std::string start_text(const ScheduleStart& start) {
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
                       s.start.is_fraction ? fmt::format("{}", s.start.fraction)
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
    const std::string from = i == 0 ? "step 0"
                             : s.start.is_fraction
                                 ? fmt::format("{} of the steps", s.start.fraction)
                                 : fmt::format("step {}", s.start.step);
    const std::string until = i + 1 == stages.size() ? "the end"
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
