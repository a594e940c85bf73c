#include "recipes/complete_recipe.hpp"

#include <yaml-cpp/yaml.h>

#include "recipes/detail/recipe_mapping.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/fields.hpp"

namespace fp8lab::recipes {

std::string complete_recipe_text(const Recipe& recipe) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& key : recipe_field_names()) {
    out << YAML::Key << key << YAML::Value;
    // The fields that are sequences; every other field_text is one scalar, which the emitter
    // quotes where YAML needs it (a glob such as "*.proj" would otherwise read as an alias).
    if (key == "override_linear_precision") {
      const auto& o = recipe.override_linear_precision;
      out << YAML::Flow << YAML::BeginSeq << o.fprop << o.dgrad << o.wgrad << YAML::EndSeq;
    } else if (key == "module_filter.skip_names") {
      out << YAML::Flow << YAML::BeginSeq;
      for (const auto& name : recipe.module_filter.skip_names) out << name;
      out << YAML::EndSeq;
    } else if (key.starts_with("keep_high_precision.")) {
      const KeepHighPrecision& k = recipe.keep_high_precision;
      const std::string gemm = key.substr(key.find('.') + 1);
      const auto& list = gemm == "layers"  ? k.layers
                         : gemm == "fprop" ? k.fprop
                         : gemm == "dgrad" ? k.dgrad
                                           : k.wgrad;
      out << YAML::Flow << YAML::BeginSeq;
      for (const auto& pattern : list) out << YAML::DoubleQuoted << pattern;
      out << YAML::EndSeq;
    } else if (key == "per_role") {
      // The rules as YAML (field_text is their flow text, which reads back as the same rules).
      out << YAML::Load(field_text(recipe, key));
    } else {
      out << field_text(recipe, key);
    }
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Recipe parse_complete_recipe_text(const std::string& text, const std::string& file) {
  const YAML::Node root = detail::load_yaml_text(text, file);
  return resolve(detail::parse_recipe_mapping(root, file, ""), Strictness::sweep);
}

}  // namespace fp8lab::recipes
