#include "recipes/probe_settings.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "recipes/detail/field_parse.hpp"

namespace fp8lab::recipes {
namespace {

const char* const kProbeWordForm =
    "SCALING[:FIELD=VALUE...], e.g. current:fp8_format=E5M2 (scalings: ";

std::string accepted_words() { return kProbeWordForm + accepted_scalings() + ")"; }

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

Recipe probe_recipe(std::string_view word, const Site& site, const std::string& field) {
  const auto parts = split(word, ':');
  if (parts.front().empty() || !parse_scaling(parts.front())) {
    throw RecipeError(site, field, std::string(word), "unknown probe recipe", accepted_words());
  }
  std::vector<FieldSetting> settings{{"scaling", parts.front(), site}};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      throw RecipeError(site, field, std::string(word),
                        "expected FIELD=VALUE after each ':' of the probe recipe",
                        accepted_words());
    }
    const std::string key = parts[i].substr(0, eq);
    std::string value = parts[i].substr(eq + 1);
    std::replace(value.begin(), value.end(), '/', ',');  // list items (',' separates probes)
    YAML::Node node;
    try {
      node = YAML::Load(value);
    } catch (const YAML::Exception&) {
      throw RecipeError(site, field + "." + key, value, "is not a value", all_field_names());
    }
    settings.push_back(detail::parse_field(key, node, site, field + "." + key));
  }
  Recipe recipe = resolve(settings, Strictness::file);
  if (recipe.autoswitch.enabled) {
    throw RecipeError(site, field, std::string(word),
                      "switches on the run's own losses, which a probe does not have:",
                      "a probe recipe without autoswitch");
  }
  return recipe;
}

std::string probe_word(const std::vector<FieldSetting>& settings) {
  std::string scaling(name(Scaling::delayed));  // resolve's default scaling
  std::string rest;
  for (const auto& s : settings) {
    if (s.key == "scaling") {
      scaling = field_text(s.value);
      continue;
    }
    std::string value = field_text(s.value);
    value.erase(std::remove(value.begin(), value.end(), ' '), value.end());
    std::replace(value.begin(), value.end(), ',', '/');
    rest.append(":").append(s.key).append("=").append(value);
  }
  return scaling + rest;
}

std::string probe_attribution_name(ProbeAttribution attribution) {
  switch (attribution) {
    case ProbeAttribution::first_middle_last: return "first_middle_last";
    case ProbeAttribution::all: return "all";
    case ProbeAttribution::none: return "none";
  }
  return "first_middle_last";
}

std::optional<ProbeAttribution> probe_attribution_named(std::string_view text) {
  for (const auto a :
       {ProbeAttribution::first_middle_last, ProbeAttribution::all, ProbeAttribution::none}) {
    if (text == probe_attribution_name(a)) return a;
  }
  return std::nullopt;
}

std::string accepted_probe_attributions() { return "first_middle_last, all, none"; }

bool probes_seed(const ProbeSettings& probes, std::int64_t seed) {
  return probes.seeds.empty() ||
         std::find(probes.seeds.begin(), probes.seeds.end(), seed) != probes.seeds.end();
}

}  // namespace fp8lab::recipes
