// Internal to recipes/: reading typed scalars out of yaml-cpp nodes with errors that carry the line.
// (yaml-cpp stays out of the public headers; only recipes/*.cpp include this.)
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "recipes/error.hpp"

namespace fp8lab::recipes::detail {

// 1-based line of a node, or 0 when yaml-cpp has no mark for it.
int line_of(const YAML::Node& node);
Site site_of(const std::string& file, const YAML::Node& node);
// "a sequence", "a mapping", "nothing (null)" or the scalar's text, for messages.
std::string describe_node(const YAML::Node& node);

// A YAML double-quoted scalar of `text`: a reader gets it back byte for byte (regexes hold
// backslashes, globs start with '*'), for the recipe texts fp8lab writes.
std::string yaml_quoted(const std::string& text);

// Parse a whole document; a syntax error becomes a RecipeError at the parser's line.
YAML::Node load_yaml_text(const std::string& text, const std::string& file);
YAML::Node load_yaml_file(const std::string& path);
// An empty document (no text, or only comments and blank lines) is a mistake in any fp8lab file,
// not "all defaults": RecipeError naming `file`, what it should hold (`what`, e.g. "a recipe")
// and the keys it accepts.
void reject_empty_document(const YAML::Node& root, const std::string& file, const std::string& what,
                           const std::string& accepted);

// Refuses (RecipeError naming the key path and both lines) a mapping anywhere in `root` that holds
// one key twice. yaml-cpp keeps both entries and a lookup finds the first, while PyYAML (what
// accelerate reads configs with) keeps the last: refused, fp8lab and the peer cannot disagree on
// a file. Each distinct node is visited once (an alias bomb stays cheap), without recursion.
void reject_duplicate_keys(const YAML::Node& root, const std::string& file);

// Python's int(str): optional surrounding whitespace, sign, decimal digits with single '_'
// between digits. Empty when the text is not such an integer or does not fit in 64 bits.
std::optional<std::int64_t> parse_python_int(std::string_view text);

// Typed scalars for fp8lab's own files. Each throws RecipeError naming `field`.
std::int64_t as_int(const YAML::Node& node, const Site& site, const std::string& field,
                    const std::string& accepted);
bool as_bool(const YAML::Node& node, const Site& site, const std::string& field);
std::string as_scalar(const YAML::Node& node, const Site& site, const std::string& field,
                      const std::string& accepted);
// A number strictly between 0 and `upper` (a band, a significance level).
double as_fraction(const YAML::Node& node, const Site& site, const std::string& field,
                   const std::string& accepted, double upper);

}  // namespace fp8lab::recipes::detail
