#include "recipes/recipe_text.hpp"

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "recipes/detail/yaml_values.hpp"
#include "recipes/fields.hpp"
#include "recipes/recipe_file.hpp"

namespace fp8lab::recipes {
namespace {

// The fields whose values are lists of names; field_text writes them unquoted, for people.
const std::vector<std::string>* names_of(const Recipe& r, const std::string& key) {
  if (key == "module_filter.skip_names") return &r.module_filter.skip_names;
  if (key == "keep_high_precision.layers") return &r.keep_high_precision.layers;
  if (key == "keep_high_precision.fprop") return &r.keep_high_precision.fprop;
  if (key == "keep_high_precision.dgrad") return &r.keep_high_precision.dgrad;
  if (key == "keep_high_precision.wgrad") return &r.keep_high_precision.wgrad;
  return nullptr;
}

}  // namespace

std::string recipe_file_text(const Recipe& recipe) {
  const std::string scaling(name(recipe.scaling));
  const Recipe defaults = parse_recipe_text("scaling: " + scaling, "recipe");
  std::string text = "scaling: " + scaling + "\n";
  std::map<std::string, std::string> nested;  // "gemm" -> its indented lines, in field order
  std::vector<std::string> nested_order;
  for (const std::string& key : recipe_field_names()) {
    // use_mxfp8_block_scaling is accelerate's other spelling of scaling: mxfp8.
    if (key == "scaling" || key == "use_mxfp8_block_scaling") continue;
    const std::string value = field_text(recipe, key);
    if (value == field_text(defaults, key)) continue;
    std::string written = value;
    if (const std::vector<std::string>* names = names_of(recipe, key)) {
      written = "[";
      for (const std::string& n : *names)
        written += (written.size() > 1 ? ", " : "") + detail::yaml_quoted(n);
      written += "]";
    }
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos) {
      text += key + ": " + written + "\n";
      continue;
    }
    const std::string group = key.substr(0, dot);
    if (!nested.contains(group)) nested_order.push_back(group);
    nested[group] += "  " + key.substr(dot + 1) + ": " + written + "\n";
  }
  for (const std::string& group : nested_order) text += group + ":\n" + nested[group];
  const Recipe read_back = parse_recipe_text(text, "recipe");
  if (canonical_string(read_back) != canonical_string(recipe)) {
    throw std::logic_error(
        fmt::format("recipe_file_text: the text reads back as {}, not as {}; text:\n{}",
                    canonical_string(read_back), canonical_string(recipe), text));
  }
  return text;
}

}  // namespace fp8lab::recipes
