#include "recipes/instability_rule.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <vector>

#include "recipes/detail/instability_yaml.hpp"
#include "recipes/detail/yaml_values.hpp"

namespace fp8lab::recipes {
namespace {

const std::vector<std::string> kKeys = {"loss_above", "over_running_min", "for_steps",
                                        "after_step"};
constexpr const char* kAccepted =
    "loss_above (a loss > 0), over_running_min (a factor > 1), for_steps (an integer >= 1), "
    "after_step (an integer >= 0); at least one of loss_above and over_running_min";

double number_of(const std::string& text, const Site& site, const std::string& field,
                 const char* accepted) {
  double value = 0;
  try {
    std::size_t used = 0;
    value = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw RecipeError(site, field, text, "wrong type: expected a number, got", accepted);
  }
  if (!std::isfinite(value)) throw RecipeError(site, field, text, "out of range:", accepted);
  return value;
}

std::int64_t integer_of(const std::string& text, const Site& site, const std::string& field,
                        const char* accepted) {
  const auto value = detail::parse_python_int(text);
  if (!value)
    throw RecipeError(site, field, text, "wrong type: expected an integer, got", accepted);
  return *value;
}

// One key's value into the rule, with its range: both the YAML and the text form come here.
void set_field(InstabilityRule& rule, const std::string& key, const std::string& text,
               const Site& site, const std::string& prefix) {
  const std::string field = prefix + key;
  if (key == "loss_above") {
    const double v = number_of(text, site, field, "a training loss > 0, e.g. 0.2");
    if (!(v > 0)) throw RecipeError(site, field, text, "out of range:", "a training loss > 0");
    rule.loss_above = v;
  } else if (key == "over_running_min") {
    const double v = number_of(text, site, field, "a factor > 1, e.g. 10");
    if (!(v > 1)) throw RecipeError(site, field, text, "out of range:", "a factor > 1, e.g. 10");
    rule.over_running_min = v;
  } else if (key == "for_steps") {
    rule.for_steps = integer_of(text, site, field, "an integer >= 1");
    if (rule.for_steps < 1)
      throw RecipeError(site, field, text, "out of range:", "an integer >= 1");
  } else if (key == "after_step") {
    rule.after_step = integer_of(text, site, field, "an integer >= 0");
    if (rule.after_step < 0) {
      throw RecipeError(site, field, text, "out of range:", "an integer >= 0");
    }
  } else {
    throw RecipeError(site, field, "", "unknown key", kAccepted, did_you_mean(key, kKeys));
  }
}

void require_threshold(const InstabilityRule& rule, const Site& site, const std::string& field) {
  if (!rule.loss_above && !rule.over_running_min) {
    throw RecipeError(site, field, "", "needs a threshold", kAccepted);
  }
}

}  // namespace

InstabilityRule default_instability_rule() {
  InstabilityRule rule;
  rule.over_running_min = 10.0;
  rule.for_steps = 10;
  return rule;
}

std::string instability_rule_text(const InstabilityRule& rule) {
  std::vector<std::string> parts;
  if (rule.loss_above) parts.push_back(fmt::format("loss_above={}", *rule.loss_above));
  if (rule.over_running_min) {
    parts.push_back(fmt::format("over_running_min={}", *rule.over_running_min));
  }
  parts.push_back(fmt::format("for_steps={}", rule.for_steps));
  parts.push_back(fmt::format("after_step={}", rule.after_step));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string describe_instability_rule(const InstabilityRule& rule) {
  std::string threshold;
  if (rule.loss_above) threshold = fmt::format("training loss > {}", *rule.loss_above);
  if (rule.over_running_min) {
    threshold += fmt::format("{}training loss > {} x its running minimum",
                             threshold.empty() ? "" : " or ", *rule.over_running_min);
  }
  return fmt::format("{} on {} consecutive step{} from step {} on (or a non-finite loss: diverged)",
                     threshold, rule.for_steps, rule.for_steps == 1 ? "" : "s", rule.after_step);
}

InstabilityRule parse_instability_rule_text(std::string_view text, const Site& site,
                                            const std::string& field) {
  InstabilityRule rule;
  rule.site = site;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(',', start), text.size());
    const std::string item(text.substr(start, end - start));
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw RecipeError(site, field, item, "expected key=value, got", kAccepted);
    }
    const std::string key = item.substr(0, eq);
    if (!seen.insert(key).second) {
      throw RecipeError(site, field + "." + key, item, "given twice:", "each key once");
    }
    set_field(rule, key, item.substr(eq + 1), site, field + ".");
    start = end + 1;
  }
  require_threshold(rule, site, field);
  return rule;
}

bool InstabilityWatch::observe(std::int64_t step, double loss) {
  bool above = false;
  if (step >= rule_.after_step) {
    if (rule_.loss_above && loss > *rule_.loss_above) {
      above = true;
      reason_ = fmt::format("training loss {} > {} (loss_above)", loss, *rule_.loss_above);
    } else if (rule_.over_running_min && running_min_ &&
               loss > *rule_.over_running_min * *running_min_) {
      above = true;
      reason_ = fmt::format("training loss {} > {} x {}, the lowest before (over_running_min)",
                            loss, *rule_.over_running_min, *running_min_);
    }
  }
  running_min_ = running_min_ ? std::min(*running_min_, loss) : loss;
  if (!above) {
    streak_ = 0;
    return false;
  }
  if (streak_++ == 0) streak_start_ = step;
  if (streak_ < rule_.for_steps) return false;
  reason_ += fmt::format(" on {} consecutive step{} from step {}", rule_.for_steps,
                         rule_.for_steps == 1 ? "" : "s", streak_start_);
  return true;
}

namespace detail {

InstabilityRule parse_instability(const YAML::Node& node, const Site& site,
                                  const std::string& file) {
  if (!node.IsMap()) {
    throw RecipeError(site, "instability", describe_node(node), "expected a mapping, got",
                      kAccepted);
  }
  InstabilityRule rule;
  rule.site = site;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& v = entry.second;
    const Site at = site_of(file, v.IsNull() ? entry.first : v);
    if (!v.IsScalar()) {
      throw RecipeError(at, "instability." + key, describe_node(v), "expected a number, got",
                        kAccepted);
    }
    set_field(rule, key, v.Scalar(), at, "instability.");
  }
  require_threshold(rule, site, "instability");
  return rule;
}

}  // namespace detail
}  // namespace fp8lab::recipes
