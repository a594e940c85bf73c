#include "recipes/role_rules.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <set>
#include <stdexcept>

#include "recipes/detail/field_parse.hpp"
#include "recipes/detail/text_case.hpp"
#include "recipes/detail/yaml_values.hpp"
#include "recipes/lowering.hpp"

namespace fp8lab::recipes {
namespace {

namespace sc = sim::scaling;

constexpr std::array<std::string_view, 6> kRoleNames{"fprop_input",       "fprop_weight",
                                                     "dgrad_grad_output", "dgrad_weight",
                                                     "wgrad_input",       "wgrad_grad_output"};

// The keys of a rule, in canonical order.
constexpr std::array<std::string_view, 12> kRuleKeys{"match",
                                                     "roles",
                                                     "scaling",
                                                     "fp8_format",
                                                     "power_2_scales",
                                                     "mx_scale_mode",
                                                     "torchao_version",
                                                     "nvfp4_mode",
                                                     "nvfp4_2d",
                                                     "nvfp4_rht",
                                                     "nvfp4_stochastic_rounding",
                                                     "mx_2d"};

std::string accepted_rule_keys() {
  std::string out;
  for (const auto key : kRuleKeys) out += (out.empty() ? "" : ", ") + std::string(key);
  return out;
}

std::string bool_text(bool b) { return b ? "true" : "false"; }

bool sets_anything(const RoleRule& r) {
  return r.scaling || r.fp8_format || r.power_2_scales || r.mx_scale_mode || r.torchao_version ||
         r.nvfp4_mode || r.nvfp4_2d || r.nvfp4_rht || r.nvfp4_stochastic_rounding || r.mx_2d;
}

bool matches(const std::string& pattern, std::string_view layer) {
  try {
    return std::regex_match(std::string(layer), std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("per_role: '" + pattern + "' is not a valid regular expression (" +
                                e.what() + ")");
  }
}

// The recipe with one rule applied (the rule's roles and patterns are the caller's business).
Recipe apply_rule(Recipe r, const RoleRule& rule) {
  if (rule.scaling && *rule.scaling != r.scaling) {
    const Recipe defaults;
    r.scaling = *rule.scaling;
    r.fp8_format = default_fp8_format(r.scaling);
    r.power_2_scales = default_power_2_scales(r.scaling);
    r.gemm = default_gemm_accumulation(r.scaling);
    r.mx_scale_mode = defaults.mx_scale_mode;
    r.torchao_version = defaults.torchao_version;
    r.nvfp4_mode = defaults.nvfp4_mode;
    r.nvfp4_2d = defaults.nvfp4_2d;
    r.nvfp4_rht = defaults.nvfp4_rht;
    r.nvfp4_stochastic_rounding = defaults.nvfp4_stochastic_rounding;
    r.mx_2d = defaults.mx_2d;
  }
  if (rule.fp8_format) r.fp8_format = *rule.fp8_format;
  if (rule.power_2_scales) r.power_2_scales = *rule.power_2_scales;
  if (rule.mx_scale_mode) r.mx_scale_mode = *rule.mx_scale_mode;
  if (rule.torchao_version) r.torchao_version = *rule.torchao_version;
  if (rule.nvfp4_mode) r.nvfp4_mode = *rule.nvfp4_mode;
  if (rule.nvfp4_2d) r.nvfp4_2d = *rule.nvfp4_2d;
  if (rule.nvfp4_rht) r.nvfp4_rht = *rule.nvfp4_rht;
  if (rule.nvfp4_stochastic_rounding) r.nvfp4_stochastic_rounding = *rule.nvfp4_stochastic_rounding;
  if (rule.mx_2d) r.mx_2d = *rule.mx_2d;
  return r;
}

std::string roles_text(std::uint8_t roles) {
  std::string out;
  for (const Role role : kRoles) {
    if (roles & role_bit(role)) out += (out.empty() ? "" : ", ") + std::string(name(role));
  }
  return "[" + out + "]";
}

std::string rule_text(const RoleRule& r) {
  std::vector<std::string> parts;
  if (!r.match.empty()) {
    std::string m;
    for (const auto& p : r.match) m += (m.empty() ? "" : ", ") + detail::yaml_quoted(p);
    parts.push_back("match: [" + m + "]");
  }
  if (r.roles != kAllRoles) parts.push_back("roles: " + roles_text(r.roles));
  if (r.scaling) parts.push_back(fmt::format("scaling: {}", name(*r.scaling)));
  if (r.fp8_format) parts.push_back(fmt::format("fp8_format: {}", name(*r.fp8_format)));
  if (r.power_2_scales) parts.push_back("power_2_scales: " + bool_text(*r.power_2_scales));
  if (r.mx_scale_mode) parts.push_back(fmt::format("mx_scale_mode: {}", name(*r.mx_scale_mode)));
  if (r.torchao_version) {
    parts.push_back(fmt::format("torchao_version: {}", name(*r.torchao_version)));
  }
  if (r.nvfp4_mode) parts.push_back(fmt::format("nvfp4_mode: {}", name(*r.nvfp4_mode)));
  if (r.nvfp4_2d) parts.push_back("nvfp4_2d: " + bool_text(*r.nvfp4_2d));
  if (r.nvfp4_rht) parts.push_back("nvfp4_rht: " + bool_text(*r.nvfp4_rht));
  if (r.nvfp4_stochastic_rounding) {
    parts.push_back("nvfp4_stochastic_rounding: " + bool_text(*r.nvfp4_stochastic_rounding));
  }
  if (r.mx_2d) parts.push_back("mx_2d: " + bool_text(*r.mx_2d));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

template <class Enum>
Enum parse_word(const YAML::Node& node, const Site& site, const std::string& field,
                std::optional<Enum> (*parse)(std::string_view), const std::string& accepted,
                bool upper_case) {
  const std::string word = detail::as_scalar(node, site, field, accepted);
  const std::string folded = upper_case ? detail::upper(word) : detail::lower(word);
  if (const auto value = parse(folded)) return *value;
  std::vector<std::string> candidates;
  for (std::size_t start = 0; start < accepted.size();) {
    const std::size_t end = std::min(accepted.find(", ", start), accepted.size());
    candidates.push_back(accepted.substr(start, end - start));
    start = end + 2;
  }
  throw RecipeError(site, field, word, "unknown value", accepted, did_you_mean(word, candidates));
}

std::vector<std::string> scalar_or_list(const YAML::Node& node, const std::string& file,
                                        const std::string& field, const std::string& accepted) {
  std::vector<std::string> items;
  if (node.IsSequence()) {
    for (const auto& item : node) {
      items.push_back(detail::as_scalar(item, detail::site_of(file, item), field, accepted));
    }
  } else {
    items.push_back(detail::as_scalar(node, detail::site_of(file, node), field, accepted));
  }
  return items;
}

RoleRule parse_rule(const YAML::Node& node, const std::string& file, const std::string& display) {
  if (!node.IsMap()) {
    throw RecipeError(detail::site_of(file, node), display, detail::describe_node(node),
                      "expected a mapping (one rule), got", accepted_rule_keys());
  }
  RoleRule rule;
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    const std::string field = display + "." + key;
    const Site site = detail::site_of(file, value.IsNull() ? entry.first : value);
    if (!seen.insert(key).second) {
      throw RecipeError(site, field, "", "is given twice", "one value per key");
    }
    if (key == "match") {
      const std::string accepted =
          "a regular expression over whole Linear names, or a list of them, e.g. "
          "'block\\d+\\.mlp\\..*'";
      rule.match = scalar_or_list(value, file, field, accepted);
      for (const std::string& pattern : rule.match) {
        if (pattern.empty()) {
          throw RecipeError(site, field, pattern, "an empty pattern matches no Linear; value",
                            accepted);
        }
        try {
          std::regex compiled(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          throw RecipeError(site, field, pattern,
                            fmt::format("is not a valid regular expression ({}):", e.what()),
                            accepted);
        }
      }
    } else if (key == "roles") {
      const std::string accepted = accepted_roles() + " (a list, or all)";
      rule.roles = 0;
      for (const std::string& word : scalar_or_list(value, file, field, accepted)) {
        if (detail::lower(word) == "all") {
          rule.roles = kAllRoles;
          continue;
        }
        const auto role = parse_role(detail::lower(word));
        if (!role) {
          std::vector<std::string> candidates(kRoleNames.begin(), kRoleNames.end());
          throw RecipeError(site, field, word, "unknown role", accepted,
                            did_you_mean(word, candidates));
        }
        rule.roles = static_cast<std::uint8_t>(rule.roles | role_bit(*role));
      }
      if (rule.roles == 0) {
        throw RecipeError(site, field, "[]", "names no role: the rule would change nothing; value",
                          accepted);
      }
    } else if (key == "scaling") {
      rule.scaling = parse_word(value, site, field, &parse_scaling, accepted_scalings(), false);
    } else if (key == "fp8_format") {
      rule.fp8_format =
          parse_word(value, site, field, &parse_fp8_format, accepted_fp8_formats(), true);
    } else if (key == "mx_scale_mode") {
      rule.mx_scale_mode =
          parse_word(value, site, field, &parse_mx_scale_mode, accepted_mx_scale_modes(), false);
    } else if (key == "torchao_version") {
      rule.torchao_version = parse_word(value, site, field, &parse_torchao_version,
                                        accepted_torchao_versions(), false);
    } else if (key == "nvfp4_mode") {
      rule.nvfp4_mode =
          parse_word(value, site, field, &parse_nvfp4_mode, accepted_nvfp4_modes(), false);
    } else if (key == "power_2_scales") {
      rule.power_2_scales = detail::as_bool(value, site, field);
    } else if (key == "nvfp4_2d") {
      rule.nvfp4_2d = detail::as_bool(value, site, field);
    } else if (key == "nvfp4_rht") {
      rule.nvfp4_rht = detail::as_bool(value, site, field);
    } else if (key == "nvfp4_stochastic_rounding") {
      rule.nvfp4_stochastic_rounding = detail::as_bool(value, site, field);
    } else if (key == "mx_2d") {
      rule.mx_2d = detail::as_bool(value, site, field);
    } else {
      std::vector<std::string> candidates(kRuleKeys.begin(), kRuleKeys.end());
      throw RecipeError(detail::site_of(file, entry.first), field, "", "unknown key",
                        accepted_rule_keys(), did_you_mean(key, candidates));
    }
  }
  if (!sets_anything(rule)) {
    throw RecipeError(detail::site_of(file, node), display, rule_text(rule),
                      "sets no field, so it changes nothing:",
                      "a rule with one of scaling, fp8_format, power_2_scales, mx_scale_mode, "
                      "torchao_version, nvfp4_mode, nvfp4_2d, nvfp4_rht, "
                      "nvfp4_stochastic_rounding, mx_2d");
  }
  return rule;
}

// Whether a rule at `index` may stand for "the value before it": no earlier rule sets `field`
// (or the scaling, which resets every option).
template <class Member>
bool earlier_set(const std::vector<RoleRule>& rules, std::size_t index, Member member) {
  for (std::size_t i = 0; i < index; ++i) {
    if ((rules[i].*member).has_value() || rules[i].scaling.has_value()) return true;
  }
  return false;
}

}  // namespace

std::string_view name(Role r) { return kRoleNames[static_cast<std::size_t>(r)]; }

std::optional<Role> parse_role(std::string_view text) {
  for (const Role r : kRoles) {
    if (name(r) == text) return r;
  }
  return std::nullopt;
}

std::string accepted_roles() {
  std::string out;
  for (const auto n : kRoleNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

Role role_of(sc::Operand operand, sc::Gemm gemm) {
  for (const Role r : kRoles) {
    if (operand_of(r) == operand && gemm_of(r) == gemm) return r;
  }
  throw std::invalid_argument(fmt::format("per_role: {} is not an operand of the {} GEMM",
                                          sc::to_string(operand), sc::to_string(gemm)));
}

sc::Operand operand_of(Role r) {
  switch (r) {
    case Role::kFpropInput:
    case Role::kWgradInput: return sc::Operand::kInput;
    case Role::kFpropWeight:
    case Role::kDgradWeight: return sc::Operand::kWeight;
    case Role::kDgradGradOutput:
    case Role::kWgradGradOutput: break;
  }
  return sc::Operand::kGradOutput;
}

sc::Gemm gemm_of(Role r) {
  switch (r) {
    case Role::kFpropInput:
    case Role::kFpropWeight: return sc::Gemm::kFprop;
    case Role::kDgradGradOutput:
    case Role::kDgradWeight: return sc::Gemm::kDgrad;
    case Role::kWgradInput:
    case Role::kWgradGradOutput: break;
  }
  return sc::Gemm::kWgrad;
}

std::string per_role_text(const std::vector<RoleRule>& rules) {
  std::vector<std::string> parts;
  for (const auto& r : rules) parts.push_back(rule_text(r));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

namespace detail {
std::vector<RoleRule> parse_per_role(const YAML::Node& node, const std::string& file,
                                     const std::string& display) {
  if (!node.IsSequence()) {
    throw RecipeError(site_of(file, node), display, describe_node(node),
                      "wrong type: expected a list of rules, got",
                      "a list of mappings of " + accepted_rule_keys());
  }
  if (node.size() > kMaxRoleRules) {
    throw RecipeError(site_of(file, node), display, std::to_string(node.size()) + " rules",
                      "has too many rules:", fmt::format("at most {}", kMaxRoleRules));
  }
  std::vector<RoleRule> rules;
  for (std::size_t i = 0; i < node.size(); ++i) {
    rules.push_back(parse_rule(node[i], file, fmt::format("{}[{}]", display, i)));
  }
  return rules;
}
}  // namespace detail

std::vector<RoleRule> parse_per_role_text(const std::string& text, const Site& site) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw RecipeError(site, "per_role", text, fmt::format("is not YAML ({}):", e.what()),
                      "a list of rules");
  }
  return detail::parse_per_role(node, site.file, "per_role");
}

void check_per_role(const Recipe& recipe, const Site& site) {
  if (recipe.per_role.empty()) return;
  if (uses_amax_history(recipe.scaling)) {
    throw RecipeError(site, "per_role", per_role_text(recipe.per_role),
                      "needs a stateless scaling: scaling delayed keeps one amax history per "
                      "Linear tensor, not per role; per_role",
                      "scaling: current, tensorwise, rowwise, rowwise_with_gw_hp, block, mxfp8, "
                      "mxfp4, mxfp6_e2m3, mxfp6_e3m2 or nvfp4 beside per_role");
  }
  for (std::size_t i = 0; i < recipe.per_role.size(); ++i) {
    const RoleRule& rule = recipe.per_role[i];
    const Recipe r = apply_rule(recipe, rule);
    const auto fail = [&](const char* key, const std::string& value, const std::string& problem,
                          const std::string& accepted) {
      throw RecipeError(site, fmt::format("per_role[{}].{}", i, key), value, problem, accepted);
    };
    if (rule.scaling && uses_amax_history(*rule.scaling)) {
      fail("scaling", "delayed",
           "delayed scaling keeps one amax history per Linear tensor, not per role; value",
           "a stateless scaling: current, tensorwise, rowwise, rowwise_with_gw_hp, block, "
           "mxfp8, mxfp4, mxfp6_e2m3, mxfp6_e3m2, nvfp4");
    }
    const std::string scaling(name(r.scaling));
    if (rule.fp8_format && subbyte_element_format(r.scaling)) {
      fail("fp8_format", std::string(name(*rule.fp8_format)),
           fmt::format("is not used by scaling '{}' (the rule's roles run it), whose every "
                       "operand is {}; value",
                       scaling, sim::spec(*subbyte_element_format(r.scaling)).name),
           "remove it, or an FP8 scaling in the rule");
    }
    if (rule.power_2_scales && !has_power_2_option(r.scaling)) {
      fail(
          "power_2_scales", bool_text(*rule.power_2_scales),
          fmt::format("is not an option of scaling '{}' (the rule's roles run it); value", scaling),
          "current, tensorwise, rowwise, rowwise_with_gw_hp, block");
    }
    if (rule.mx_scale_mode && !is_mx(r.scaling)) {
      fail("mx_scale_mode", std::string(name(*rule.mx_scale_mode)),
           fmt::format("applies to the MX scalings only, not '{}' (the rule's roles run it); "
                       "value",
                       scaling),
           "scaling: mxfp8, mxfp4, mxfp6_e2m3 or mxfp6_e3m2 in the rule or the recipe");
    }
    if (rule.torchao_version && !uses_torchao_version(r)) {
      fail("torchao_version", std::string(name(*rule.torchao_version)),
           "applies to the MX torchao scale modes only (floor, ceil, even, rceil); value",
           "an MX scaling with mx_scale_mode floor, ceil, even or rceil");
    }
    if (r.scaling != Scaling::nvfp4) {
      const std::pair<const char*, bool> nvfp4_fields[] = {
          {"nvfp4_mode", rule.nvfp4_mode.has_value()},
          {"nvfp4_2d", rule.nvfp4_2d.has_value()},
          {"nvfp4_rht", rule.nvfp4_rht.has_value()},
          {"nvfp4_stochastic_rounding", rule.nvfp4_stochastic_rounding.has_value()}};
      for (const auto& [key, given] : nvfp4_fields) {
        if (given) {
          fail(key, rule_text(rule),
               fmt::format("applies to scaling nvfp4 only, not '{}' (the rule's roles run it); "
                           "rule",
                           scaling),
               "scaling: nvfp4 in the rule or the recipe");
        }
      }
    }
    if (rule.mx_2d && r.scaling != Scaling::mxfp8) {
      fail("mx_2d", rule_text(rule),
           fmt::format("applies to scaling mxfp8 only, not '{}' (the rule's roles run it); rule",
                       scaling),
           "scaling: mxfp8 in the rule or the recipe");
    }
    if (r.nvfp4_mode == Nvfp4Mode::kTorchao &&
        (r.nvfp4_2d || r.nvfp4_rht || r.nvfp4_stochastic_rounding)) {
      fail("nvfp4_mode", "torchao",
           "is torchao's nvfp4_quantize (1 x 16 blocks, round to nearest, no RHT); nvfp4_2d, "
           "nvfp4_rht and nvfp4_stochastic_rounding are options of nvfp4_mode te and "
           "torchao_training only; value",
           "nvfp4_mode: te or torchao_training with those options, or none of them");
    }
  }
}

bool rule_matches(const RoleRule& rule, std::string_view layer) {
  if (rule.match.empty()) return true;
  return std::any_of(rule.match.begin(), rule.match.end(),
                     [&](const std::string& p) { return matches(p, layer); });
}

Recipe role_recipe(const Recipe& recipe, std::string_view layer, Role role) {
  Recipe r = recipe;
  for (const RoleRule& rule : recipe.per_role) {
    if ((rule.roles & role_bit(role)) && rule_matches(rule, layer)) r = apply_rule(r, rule);
  }
  return r;
}

Recipe role_recipe(const Recipe& recipe, Role role) {
  for (std::size_t i = 0; i < recipe.per_role.size(); ++i) {
    if (!recipe.per_role[i].match.empty()) {
      throw std::invalid_argument(fmt::format(
          "per_role[{}] applies to the Linears matching {}: the plan needs the Linear's name", i,
          detail::yaml_quoted(recipe.per_role[i].match.front())));
    }
  }
  return role_recipe(recipe, "", role);
}

Recipe for_layer(const Recipe& recipe, std::string_view layer) {
  Recipe r = recipe;
  r.per_role.clear();
  for (const RoleRule& rule : recipe.per_role) {
    if (!rule_matches(rule, layer)) continue;
    RoleRule unnamed = rule;
    unnamed.match.clear();
    r.per_role.push_back(std::move(unnamed));
  }
  return r;
}

std::vector<Recipe> role_recipes(const Recipe& recipe, Role role) {
  std::vector<const RoleRule*> naming;
  for (const RoleRule& rule : recipe.per_role) {
    if (rule.roles & role_bit(role)) naming.push_back(&rule);
  }
  std::vector<Recipe> out;
  const std::size_t subsets = std::size_t{1} << naming.size();
  for (std::size_t mask = 0; mask < subsets; ++mask) {
    Recipe r = recipe;
    for (std::size_t i = 0; i < naming.size(); ++i) {
      if (mask & (std::size_t{1} << i)) r = apply_rule(r, *naming[i]);
    }
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> unmatched_role_patterns(const Recipe& recipe,
                                                 const std::vector<std::string>& layers) {
  std::vector<std::string> unmatched;
  for (const RoleRule& rule : recipe.per_role) {
    for (const std::string& pattern : rule.match) {
      const bool matched = std::any_of(layers.begin(), layers.end(),
                                       [&](const std::string& l) { return matches(pattern, l); });
      if (!matched && std::find(unmatched.begin(), unmatched.end(), pattern) == unmatched.end()) {
        unmatched.push_back(pattern);
      }
    }
  }
  return unmatched;
}

void canonicalize_per_role(Recipe& recipe, std::vector<std::string>& reasons) {
  std::vector<RoleRule>& rules = recipe.per_role;
  if (rules.empty()) return;
  const OverrideLinearPrecision& o = recipe.override_linear_precision;
  std::uint8_t overridden = 0;
  if (o.fprop)
    overridden = static_cast<std::uint8_t>(overridden | role_bit(Role::kFpropInput) |
                                           role_bit(Role::kFpropWeight));
  if (o.dgrad)
    overridden = static_cast<std::uint8_t>(overridden | role_bit(Role::kDgradGradOutput) |
                                           role_bit(Role::kDgradWeight));
  if (o.wgrad)
    overridden = static_cast<std::uint8_t>(overridden | role_bit(Role::kWgradInput) |
                                           role_bit(Role::kWgradGradOutput));
  constexpr std::uint8_t kWeightRoles = role_bit(Role::kFpropWeight) | role_bit(Role::kDgradWeight);
  constexpr std::uint8_t kRhtRoles = role_bit(Role::kWgradInput) | role_bit(Role::kWgradGradOutput);
  constexpr std::uint8_t kGradRoles = role_bit(Role::kDgradGradOutput) |
                                      role_bit(Role::kWgradGradOutput);

  std::vector<RoleRule> out;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    RoleRule rule = rules[i];
    const std::string label = fmt::format("per_role[{}]", i);
    std::sort(rule.match.begin(), rule.match.end());
    rule.match.erase(std::unique(rule.match.begin(), rule.match.end()), rule.match.end());
    if (rule.roles & overridden) {
      rule.roles = static_cast<std::uint8_t>(rule.roles & ~overridden);
      reasons.push_back(fmt::format(
          "{}: roles of GEMMs that override_linear_precision runs in high precision change "
          "nothing",
          label));
    }
    // The fields that change nothing. The "value before" is the recipe's where no earlier rule
    // sets the field or a scaling (which would reset it).
    const auto drop = [&](auto member, const char* key, bool no_effect, const char* why) {
      if (!(rule.*member).has_value() || !no_effect) return;
      (rule.*member).reset();
      reasons.push_back(fmt::format("{}.{} {}", label, key, why));
    };
    drop(&RoleRule::nvfp4_2d, "nvfp4_2d", !(rule.roles & kWeightRoles),
         "applies to weights only, and the rule names no weight role");
    drop(&RoleRule::mx_2d, "mx_2d", !(rule.roles & kWeightRoles),
         "applies to weights only, and the rule names no weight role");
    drop(&RoleRule::nvfp4_rht, "nvfp4_rht", !(rule.roles & kRhtRoles),
         "applies to the wgrad input and grad_output only, and the rule names neither");
    drop(&RoleRule::nvfp4_stochastic_rounding, "nvfp4_stochastic_rounding",
         !(rule.roles & kGradRoles),
         "applies to grad_output only, and the rule names no grad_output role");
    const bool scaling_unchanged = rule.scaling && *rule.scaling == recipe.scaling &&
                                   !earlier_set(rules, i, &RoleRule::scaling);
    drop(&RoleRule::scaling, "scaling", scaling_unchanged,
         "is the scaling these roles already run");
    if (!rule.scaling) {
      const auto same = [&](auto member, auto field, const char* key) {
        drop(member, key,
             (rule.*member).has_value() && *(rule.*member) == recipe.*field &&
                 !earlier_set(rules, i, member),
             "equals the recipe's value");
      };
      same(&RoleRule::fp8_format, &Recipe::fp8_format, "fp8_format");
      same(&RoleRule::power_2_scales, &Recipe::power_2_scales, "power_2_scales");
      same(&RoleRule::mx_scale_mode, &Recipe::mx_scale_mode, "mx_scale_mode");
      same(&RoleRule::torchao_version, &Recipe::torchao_version, "torchao_version");
      same(&RoleRule::nvfp4_mode, &Recipe::nvfp4_mode, "nvfp4_mode");
      same(&RoleRule::nvfp4_2d, &Recipe::nvfp4_2d, "nvfp4_2d");
      same(&RoleRule::nvfp4_rht, &Recipe::nvfp4_rht, "nvfp4_rht");
      same(&RoleRule::nvfp4_stochastic_rounding, &Recipe::nvfp4_stochastic_rounding,
           "nvfp4_stochastic_rounding");
      same(&RoleRule::mx_2d, &Recipe::mx_2d, "mx_2d");
    }
    if (rule.roles == 0 || !sets_anything(rule)) {
      reasons.push_back(fmt::format("{} changes nothing: dropped", label));
      continue;
    }
    out.push_back(std::move(rule));
  }
  rules = std::move(out);
  // A first rule over every Linear and role is the recipe's own fields, spelled another way.
  const bool elementwise_mx = recipe.norm_affine_precision == ElementwisePrecision::kMx ||
                              recipe.activation_precision == ElementwisePrecision::kMx;
  while (!rules.empty() && rules.front().match.empty() && rules.front().roles == kAllRoles &&
         !elementwise_mx) {
    const RoleRule first = rules.front();
    rules.erase(rules.begin());
    std::vector<RoleRule> rest = std::move(rules);
    recipe = apply_rule(recipe, first);
    recipe.per_role = std::move(rest);
    reasons.push_back("a per_role rule over every Linear and role is the recipe's own fields");
  }
}

std::string describe_per_role(const Recipe& recipe) {
  if (recipe.per_role.empty()) return {};
  std::string out = fmt::format("per_role: {} rule{} (later rules win; roles no rule names run "
                                "the recipe's own plans)\n",
                                recipe.per_role.size(), recipe.per_role.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < recipe.per_role.size(); ++i) {
    RoleRule rule = recipe.per_role[i];
    out += fmt::format("  [{}] {}\n", i, rule_text(rule));
    // The plans of this rule's roles, for a Linear that only this rule matches.
    Recipe alone = recipe;
    rule.match.clear();
    alone.per_role = {rule};
    for (const Role role : kRoles) {
      if (!(rule.roles & role_bit(role))) continue;
      std::string text;
      try {
        text = plan_text(plan(alone, operand_of(role), gemm_of(role)));
      } catch (const std::invalid_argument& e) {
        text = std::string("not lowered: ") + e.what();
      }
      out += fmt::format("      {:<18} {}\n", name(role), text);
    }
  }
  return out;
}

std::string plan_text(const sc::QuantizePlan& p) {
  if (p.kind == sc::QuantizeKind::kHighPrecision) return "high_precision";
  const auto extent = [](std::int64_t n) {
    return n == 0 ? std::string("all") : std::to_string(n);
  };
  std::string out = fmt::format("{} {} {}x{} {}", sc::to_string(p.kind), sim::spec(p.format).name,
                                extent(p.block.rows), extent(p.block.cols), sc::to_string(p.axis));
  if (p.pow2) out += " pow2";
  if (p.kind == sc::QuantizeKind::kMx) {
    out += fmt::format(" {} {}", sc::to_string(p.mx_mode), sc::to_string(p.torchao));
  }
  if (p.kind == sc::QuantizeKind::kNvfp4) out += fmt::format(" {}", sc::to_string(p.nvfp4_mode));
  if (p.kind == sc::QuantizeKind::kStatic) out += fmt::format(" scale {}", p.static_scale);
  if (p.rht) out += " rht";
  if (p.stochastic_rounding) out += " sr";
  return out;
}

}  // namespace fp8lab::recipes
