// RecipeError: the one error type of recipes/. Its message names where (file and line, or the
// environment variable), which field, the bad value, what is accepted, and a "did you mean" when a
// near miss exists, e.g.
//   run.yaml:4: fp8_config.fp8_format: unknown value 'HYBRD'; accepted: HYBRID, E4M3, E5M2 (did you mean 'HYBRID'?)
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::recipes {

// Where a value came from: a file and a 1-based line (0 = the whole file), or an environment
// variable (file = "environment", field = the variable's name).
struct Site {
  std::string file;
  int line = 0;
};

class RecipeError : public std::runtime_error {
 public:
  RecipeError(const Site& site, std::string field, std::string value, std::string problem,
              std::string accepted, std::string suggestion = {});
  const Site& site() const { return site_; }
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& accepted() const { return accepted_; }

 private:
  Site site_;
  std::string field_, value_, accepted_;
};

// The candidate closest to `text` by edit distance (case-insensitive), if it is close enough to be
// a plausible typo (at most a third of the longer word, at least 2 edits allowed); else empty.
std::string did_you_mean(std::string_view text, const std::vector<std::string>& candidates);

}  // namespace fp8lab::recipes
