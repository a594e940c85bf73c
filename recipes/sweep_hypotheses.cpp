#include "recipes/sweep_hypotheses.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "recipes/detail/hypotheses_yaml.hpp"
#include "recipes/detail/yaml_values.hpp"

namespace fp8lab::recipes {
namespace {

const std::vector<std::string> kKeys = {"alpha", "band", "tests"};
const std::vector<std::string> kKinds = {"verdict", "contrast"};
constexpr const char* kLabelAccepted =
    "a combination label naming every sweep parameter once as field=value with one of its "
    "values, e.g. 'scaling=mxfp8 fp8_format=HYBRID'";

SweepHypothesis parse_test(const YAML::Node& item, const std::string& file,
                           const std::string& field) {
  const Site site = detail::site_of(file, item);
  const std::string accepted =
      "a mapping with one key: verdict: <label>, or contrast: [<label>, <label>]";
  if (!item.IsMap() || item.size() != 1) {
    throw RecipeError(site, field, detail::describe_node(item), "expected", accepted);
  }
  const auto entry = item.begin();
  const YAML::Node key_node = entry->first;
  const YAML::Node value = entry->second;
  const std::string kind = key_node.Scalar();
  SweepHypothesis out{kind, {}, site};
  if (kind == "verdict") {
    out.labels.push_back(
        detail::as_scalar(value, detail::site_of(file, value), field + ".verdict", kLabelAccepted));
  } else if (kind == "contrast") {
    if (!value.IsSequence() || value.size() != 2) {
      throw RecipeError(detail::site_of(file, value), field + ".contrast",
                        detail::describe_node(value), "expected a list of two labels, got",
                        kLabelAccepted);
    }
    for (std::size_t i = 0; i < 2; ++i) {
      out.labels.push_back(detail::as_scalar(value[i], detail::site_of(file, value[i]),
                                             fmt::format("{}.contrast[{}]", field, i),
                                             kLabelAccepted));
    }
  } else {
    throw RecipeError(detail::site_of(file, key_node), field + "." + kind, "", "unknown key",
                      "verdict, contrast", did_you_mean(kind, kKinds));
  }
  return out;
}

// A label's field=value words against the parameters: field -> value text, each parameter once.
std::map<std::string, std::string> label_settings(const std::string& label,
                                                  const std::vector<LabelParameter>& parameters,
                                                  const Site& site, const std::string& field) {
  std::vector<std::string> keys;
  for (const auto& p : parameters) keys.push_back(p.key);
  std::map<std::string, std::string> out;
  std::istringstream words(label);
  for (std::string word; words >> word;) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) {
      throw RecipeError(site, field, label, "'" + word + "' is not field=value in", kLabelAccepted);
    }
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    const auto p = std::find_if(parameters.begin(), parameters.end(),
                                [&](const LabelParameter& q) { return q.key == key; });
    if (p == parameters.end()) {
      throw RecipeError(site, field, label, "'" + key + "' is not a sweep parameter in",
                        "the parameters " + fmt::format("{}", fmt::join(keys, ", ")),
                        did_you_mean(key, keys));
    }
    if (std::find(p->values.begin(), p->values.end(), value) == p->values.end()) {
      throw RecipeError(site, field, label, "'" + value + "' is not a value of " + key + " in",
                        fmt::format("{}", fmt::join(p->values, ", ")),
                        did_you_mean(value, p->values));
    }
    if (!out.emplace(key, value).second) {
      throw RecipeError(site, field, label, "names " + key + " twice:", kLabelAccepted);
    }
  }
  for (const auto& key : keys) {
    if (!out.contains(key)) {
      throw RecipeError(site, field, label, "does not name the parameter " + key + ":",
                        kLabelAccepted);
    }
  }
  return out;
}

std::string ordered_label(const std::map<std::string, std::string>& settings,
                          const std::vector<LabelParameter>& parameters) {
  std::string out;
  for (const auto& p : parameters) {
    out += (out.empty() ? "" : " ") + p.key + "=" + settings.at(p.key);
  }
  return out;
}

}  // namespace

void check_hypotheses(SweepHypotheses& hypotheses, const std::vector<LabelParameter>& parameters) {
  if (!hypotheses.given) return;
  if (parameters.empty()) {
    throw RecipeError(hypotheses.site, "hypotheses", "",
                      "needs parameters (its tests name combinations of them)",
                      "a sweep with parameters, or remove hypotheses");
  }
  for (std::size_t i = 0; i < hypotheses.tests.size(); ++i) {
    auto& test = hypotheses.tests[i];
    std::vector<std::map<std::string, std::string>> settings;
    for (std::size_t j = 0; j < test.labels.size(); ++j) {
      const std::string field = test.kind == "verdict"
                                    ? fmt::format("hypotheses.tests[{}].verdict", i)
                                    : fmt::format("hypotheses.tests[{}].contrast[{}]", i, j);
      settings.push_back(label_settings(test.labels[j], parameters, test.site, field));
      test.labels[j] = ordered_label(settings.back(), parameters);
    }
    if (test.kind != "contrast") continue;
    std::size_t differing = 0;
    for (const auto& [key, value] : settings[0]) differing += settings[1].at(key) != value;
    if (differing != 1) {
      throw RecipeError(test.site, fmt::format("hypotheses.tests[{}].contrast", i),
                        test.labels[0] + " vs " + test.labels[1],
                        fmt::format("differs in {} parameters:", differing),
                        "two labels that differ in exactly one parameter (the report's contrasts)");
    }
  }
}

namespace detail {

SweepHypotheses parse_hypotheses(const YAML::Node& node, const Site& site,
                                 const std::string& file) {
  SweepHypotheses out;
  out.given = true;
  out.site = site;
  if (!node.IsMap()) {
    throw RecipeError(site, "hypotheses", describe_node(node), "expected a mapping, got",
                      "alpha, band, tests");
  }
  bool has_tests = false;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& v = entry.second;
    const Site at = site_of(file, v.IsNull() ? entry.first : v);
    const std::string field = "hypotheses." + key;
    if (key == "alpha") {
      out.alpha = as_fraction(v, at, field, "a significance level in (0, 0.5), e.g. 0.05", 0.5);
    } else if (key == "band") {
      out.has_band = true;
      out.band =
          as_fraction(v, at, field, "a fraction in (0, 1), e.g. 0.0025 for a 0.25% band", 1.0);
    } else if (key == "tests") {
      has_tests = true;
      if (!v.IsSequence() || v.size() == 0) {
        throw RecipeError(at, field, v.IsSequence() ? "[]" : describe_node(v),
                          "expected a non-empty list, got",
                          "a list of verdict: <label> and contrast: [<label>, <label>]");
      }
      for (std::size_t i = 0; i < v.size(); ++i) {
        out.tests.push_back(parse_test(v[i], file, fmt::format("{}[{}]", field, i)));
      }
    } else {
      throw RecipeError(site_of(file, entry.first), field, "", "unknown key", "alpha, band, tests",
                        did_you_mean(key, kKeys));
    }
  }
  if (!has_tests) {
    throw RecipeError(site, "hypotheses.tests", "", "is required",
                      "a list of verdict: <label> and contrast: [<label>, <label>]");
  }
  return out;
}

}  // namespace detail
}  // namespace fp8lab::recipes
