#include "recipes/recipe_file.hpp"

#include <set>

#include "recipes/detail/field_parse.hpp"
#include "recipes/detail/recipe_mapping.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/text_file.hpp"

namespace fp8lab::recipes {
namespace detail {

std::vector<FieldSetting> parse_recipe_mapping(const YAML::Node& mapping, const std::string& file,
                                               const std::string& prefix) {
  if (!mapping.IsMap()) {
    throw RecipeError(site_of(file, mapping), prefix.empty() ? "recipe" : prefix,
                      describe_node(mapping), "expected a mapping of recipe fields, got",
                      all_field_names());
  }
  std::vector<FieldSetting> settings;
  std::set<std::string> seen;
  auto add = [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    const std::string display = prefix + key;
    if (!seen.insert(key).second) {
      throw RecipeError(site_of(file, key_node), display, "", "is given twice",
                        "one value per field");
    }
    settings.push_back(
        parse_field(key, value, site_of(file, value.IsNull() ? key_node : value), display));
  };
  for (const auto& entry : mapping) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (key == "gemm" || key == "module_filter" || key == "keep_high_precision" ||
        key == "autoswitch" || key == "optimizer_states") {
      if (!value.IsMap()) {
        const char* accepted = key == "gemm"                  ? "fprop, dgrad, wgrad"
                               : key == "keep_high_precision" ? "layers, fprop, dgrad, wgrad"
                               : key == "autoswitch"          ? "enabled, underflow_percent, mse"
                               : key == "optimizer_states"
                                   ? "m, v, scaling, expansion"
                                   : "skip_names, skip_first_last_linear, "
                                     "require_dims_divisible_by_16, "
                                     "skip_later_siblings_after_indivisible";
        throw RecipeError(site_of(file, value.IsNull() ? entry.first : value), prefix + key,
                          describe_node(value), "expected a mapping, got", accepted);
      }
      for (const auto& inner : value) {
        add(key + "." + inner.first.Scalar(), inner.first, inner.second);
      }
    } else {
      add(key, entry.first, value);
    }
  }
  return settings;
}

}  // namespace detail

Recipe parse_recipe_text(const std::string& text, const std::string& file) {
  const YAML::Node root = detail::load_yaml_text(text, file);
  if (root.IsNull()) return resolve({}, Strictness::file);
  if (root.IsMap() && root["schedule"]) {
    // A precision schedule (schedule.hpp): the file's other fields are every stage's base.
    YAML::Node rest(YAML::NodeType::Map);
    for (const auto& entry : root) {
      if (entry.first.Scalar() != "schedule") rest[entry.first] = entry.second;
    }
    return parse_schedule(root["schedule"], detail::parse_recipe_mapping(rest, file, ""),
                          Strictness::file, file, "schedule");
  }
  return resolve(detail::parse_recipe_mapping(root, file, ""), Strictness::file);
}

std::string read_recipe_text(const std::string& path) {
  std::string text = read_text_file(path);
  detail::reject_empty_document(detail::load_yaml_text(text, path), path, "recipe",
                                all_field_names() + " (or an accelerate config)");
  return text;
}

Recipe read_recipe_file(const std::string& path) {
  return parse_recipe_text(read_recipe_text(path), path);
}

}  // namespace fp8lab::recipes
