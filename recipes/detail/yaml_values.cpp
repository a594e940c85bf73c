#include "recipes/detail/yaml_values.hpp"

#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "recipes/detail/text_case.hpp"
#include "recipes/text_file.hpp"
#include "recipes/utf8.hpp"

namespace fp8lab::recipes::detail {

int line_of(const YAML::Node& node) {
  const int line = node.Mark().line;
  return line >= 0 ? line + 1 : 0;
}

Site site_of(const std::string& file, const YAML::Node& node) { return {file, line_of(node)}; }

std::string describe_node(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing (null)";
  if (node.IsSequence()) return "a sequence";
  if (node.IsMap()) return "a mapping";
  return node.Scalar();
}

YAML::Node load_yaml_text(const std::string& text, const std::string& file) {
  // Before parsing: a byte in a comment counts too, as the text is stored in every run record.
  require_utf8(file, file, "file name");
  require_utf8(text, file, "file text");
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw RecipeError({file, e.mark.line >= 0 ? e.mark.line + 1 : 0}, "YAML", "",
                      "syntax error: " + e.msg, "");
  }
}

void reject_empty_document(const YAML::Node& root, const std::string& file, const std::string& what,
                           const std::string& accepted) {
  if (root.IsDefined() && !root.IsNull()) return;
  throw RecipeError({file, 0}, what, "",
                    "the file is empty (no text, or only comments); expected a YAML mapping of "
                    "its keys",
                    accepted);
}

YAML::Node load_yaml_file(const std::string& path) {
  return load_yaml_text(recipes::read_text_file(path), path);
}

void reject_duplicate_keys(const YAML::Node& root, const std::string& file) {
  std::vector<std::pair<YAML::Node, std::string>> pending{{root, ""}};  // node, its key path
  std::set<std::size_t> visited;  // Mark().pos: aliases of one anchor share their node
  while (!pending.empty()) {
    auto [node, path] = std::move(pending.back());
    pending.pop_back();
    if (!node.IsMap() && !node.IsSequence()) continue;
    if (node.Mark().pos >= 0 && !visited.insert(static_cast<std::size_t>(node.Mark().pos)).second) {
      continue;
    }
    if (node.IsSequence()) {
      std::size_t i = 0;
      for (const auto& item : node) {
        pending.emplace_back(item, path + "[" + std::to_string(i++) + "]");
      }
      continue;
    }
    std::map<std::string, int> line_of_key;
    for (const auto& entry : node) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
      const std::string key_path = path.empty() ? key : path + "." + key;
      if (entry.first.IsScalar()) {
        const auto [it, first] = line_of_key.emplace(key, line_of(entry.first));
        if (!first) {
          throw RecipeError(site_of(file, entry.first), key_path, "",
                            "is given twice (first on line " + std::to_string(it->second) +
                                "; PyYAML would keep this one, yaml-cpp the first)",
                            "each key once per mapping");
        }
      }
      pending.emplace_back(entry.second, key_path);
    }
  }
}

std::optional<std::int64_t> parse_python_int(std::string_view text) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.front() == '_' || text.back() == '_') return std::nullopt;
  // Accumulate as a negative number so that INT64_MIN fits.
  std::int64_t value = 0;
  char previous = '0';
  for (char c : text) {
    if (c == '_') {
      if (previous == '_') return std::nullopt;
      previous = c;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    const int digit = c - '0';
    if (value < (std::numeric_limits<std::int64_t>::min() + digit) / 10) return std::nullopt;
    value = value * 10 - digit;
    previous = c;
  }
  if (!negative) {
    if (value == std::numeric_limits<std::int64_t>::min()) return std::nullopt;
    value = -value;
  }
  return value;
}

std::int64_t as_int(const YAML::Node& node, const Site& site, const std::string& field,
                    const std::string& accepted) {
  if (!node.IsScalar()) {
    throw RecipeError(site, field, describe_node(node), "wrong type: expected an integer, got",
                      accepted);
  }
  const auto value = parse_python_int(node.Scalar());
  if (!value) {
    const bool digits_only = !node.Scalar().empty() &&
                             node.Scalar().find_first_not_of("+-0123456789_ ") == std::string::npos;
    throw RecipeError(site, field, node.Scalar(),
                      digits_only ? "out of the 64-bit integer range:"
                                  : "wrong type: expected an integer, got",
                      accepted);
  }
  return *value;
}

bool as_bool(const YAML::Node& node, const Site& site, const std::string& field) {
  const std::string accepted = "true, false";
  if (node.IsScalar()) {
    const std::string word = lower(node.Scalar());
    if (word == "true" || word == "yes" || word == "on") return true;
    if (word == "false" || word == "no" || word == "off") return false;
    throw RecipeError(site, field, node.Scalar(), "wrong type: expected a boolean, got", accepted);
  }
  throw RecipeError(site, field, describe_node(node), "wrong type: expected a boolean, got",
                    accepted);
}

std::string as_scalar(const YAML::Node& node, const Site& site, const std::string& field,
                      const std::string& accepted) {
  if (!node.IsScalar()) {
    throw RecipeError(site, field, describe_node(node), "wrong type: expected one word, got",
                      accepted);
  }
  return node.Scalar();
}

double as_fraction(const YAML::Node& node, const Site& site, const std::string& field,
                   const std::string& accepted, double upper) {
  if (!node.IsScalar()) throw RecipeError(site, field, describe_node(node), "expected", accepted);
  double value = 0;
  try {
    std::size_t used = 0;
    value = std::stod(node.Scalar(), &used);
    if (used != node.Scalar().size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw RecipeError(site, field, node.Scalar(), "wrong type: expected a number, got", accepted);
  }
  if (!(value > 0 && value < upper)) {
    throw RecipeError(site, field, node.Scalar(), "out of range:", accepted);
  }
  return value;
}

std::string yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace fp8lab::recipes::detail
