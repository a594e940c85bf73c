#include "experiments/workloads/workload_options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <stdexcept>
#include <system_error>

namespace fp8lab::experiments {
namespace {

std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

std::optional<double> parse_real(const std::string& text) {
  double value = 0;
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (begin == end || error != std::errc() || stop != end || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// The shortest text that reads back as the same double ("0.001", "1e-05", "3").
std::string real_text(double value) {
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

}  // namespace

WorkloadOption integer_option(std::string key, std::int64_t default_value, std::int64_t minimum,
                              std::int64_t maximum, std::string meaning) {
  WorkloadOption o;
  o.key = std::move(key);
  o.kind = WorkloadOption::Kind::integer;
  o.default_value = std::to_string(default_value);
  o.meaning = std::move(meaning);
  o.accepted = "an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum);
  o.canonical = [minimum, maximum](const std::string& text) -> std::optional<std::string> {
    const auto value = parse_integer(text);
    if (!value || *value < minimum || *value > maximum) return std::nullopt;
    return std::to_string(*value);
  };
  return o;
}

WorkloadOption real_option(std::string key, double default_value, double minimum, double maximum,
                           std::string meaning) {
  WorkloadOption o;
  o.key = std::move(key);
  o.kind = WorkloadOption::Kind::real;
  o.default_value = real_text(default_value);
  o.meaning = std::move(meaning);
  o.accepted = "a number from " + real_text(minimum) + " to " + real_text(maximum);
  o.canonical = [minimum, maximum](const std::string& text) -> std::optional<std::string> {
    const auto value = parse_real(text);
    if (!value || *value < minimum || *value > maximum) return std::nullopt;
    return real_text(*value == 0.0 ? 0.0 : *value);  // -0 -> 0
  };
  return o;
}

WorkloadOption choice_option(std::string key, std::string default_value,
                             std::vector<std::string> choices, std::string meaning) {
  WorkloadOption o;
  o.key = std::move(key);
  o.kind = WorkloadOption::Kind::choice;
  o.default_value = std::move(default_value);
  o.meaning = std::move(meaning);
  for (std::size_t i = 0; i < choices.size(); ++i) {
    o.accepted += (i == 0 ? "one of " : ", ") + choices[i];
  }
  o.canonical = [choices](const std::string& text) -> std::optional<std::string> {
    if (std::find(choices.begin(), choices.end(), text) == choices.end()) return std::nullopt;
    return text;
  };
  return o;
}

WorkloadOption flag_option(std::string key, bool default_value, std::string meaning) {
  WorkloadOption o;
  o.key = std::move(key);
  o.kind = WorkloadOption::Kind::flag;
  o.default_value = default_value ? "true" : "false";
  o.meaning = std::move(meaning);
  o.accepted = "true or false";
  o.canonical = [](const std::string& text) -> std::optional<std::string> {
    if (text == "true" || text == "1") return "true";
    if (text == "false" || text == "0") return "false";
    return std::nullopt;
  };
  return o;
}

WorkloadOptionValues::WorkloadOptionValues(const WorkloadOptionTable& table,
                                           std::map<std::string, std::string> set) {
  for (const auto& option : table) {
    const auto it = set.find(option.key);
    const bool changed = it != set.end() && it->second != option.default_value;
    values_[option.key] = {option.kind, changed ? it->second : option.default_value};
    if (changed) changed_[option.key] = it->second;
  }
}

const std::string& WorkloadOptionValues::at(const std::string& key,
                                            WorkloadOption::Kind kind) const {
  const auto it = values_.find(key);
  if (it == values_.end() || it->second.first != kind) {
    // A workload asking for an option its own table lacks: a programming error.
    throw std::logic_error("workload option '" + key + "' is not in the table with that type");
  }
  return it->second.second;
}

std::int64_t WorkloadOptionValues::integer(const std::string& key) const {
  return *parse_integer(at(key, WorkloadOption::Kind::integer));
}
double WorkloadOptionValues::real(const std::string& key) const {
  return *parse_real(at(key, WorkloadOption::Kind::real));
}
bool WorkloadOptionValues::flag(const std::string& key) const {
  return at(key, WorkloadOption::Kind::flag) == "true";
}
const std::string& WorkloadOptionValues::text(const std::string& key) const {
  return at(key, WorkloadOption::Kind::choice);
}

nlohmann::json WorkloadOptionValues::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : values_) {
    switch (value.first) {
      case WorkloadOption::Kind::integer: out[key] = *parse_integer(value.second); break;
      case WorkloadOption::Kind::real: out[key] = *parse_real(value.second); break;
      case WorkloadOption::Kind::flag: out[key] = value.second == "true"; break;
      case WorkloadOption::Kind::choice: out[key] = value.second; break;
    }
  }
  return out;
}

WorkloadSpec parse_workload_spec(const std::string& text) {
  WorkloadSpec spec;
  const auto colon = text.find(':');
  spec.name = trimmed(text.substr(0, colon));
  if (spec.name.empty()) {
    throw std::invalid_argument("workload '" + text +
                                "': no name; expected NAME or "
                                "NAME:key=value,key=value (e.g. llama-s:d_model=384)");
  }
  if (colon == std::string::npos) return spec;
  std::string rest = text.substr(colon + 1);
  std::size_t start = 0;
  while (start <= rest.size()) {
    const auto comma = std::min(rest.find(',', start), rest.size());
    const auto item = rest.substr(start, comma - start);
    const auto eq = item.find('=');
    if (eq == std::string::npos || trimmed(item.substr(0, eq)).empty()) {
      throw std::invalid_argument("workload '" + text + "': setting '" + item +
                                  "' is not key=value; expected NAME:key=value,key=value "
                                  "(e.g. llama-s:d_model=384)");
    }
    spec.settings.emplace_back(trimmed(item.substr(0, eq)), trimmed(item.substr(eq + 1)));
    start = comma + 1;
  }
  return spec;
}

WorkloadOptionValues resolve_workload_options(
    const std::string& name, const WorkloadOptionTable& table,
    const std::vector<std::pair<std::string, std::string>>& settings) {
  std::map<std::string, std::string> set;
  for (const auto& [key, value] : settings) {
    const auto option = std::find_if(table.begin(), table.end(),
                                     [&](const WorkloadOption& o) { return o.key == key; });
    if (option == table.end()) {
      std::string keys;
      for (const auto& o : table) keys += (keys.empty() ? "" : ", ") + o.key;
      throw std::invalid_argument(
          "workload " + name + ": unknown option '" + key + "'; accepted: " +
          (keys.empty() ? std::string("none (this workload has no options)") : keys));
    }
    const auto canonical = option->canonical(value);
    if (!canonical) {
      throw std::invalid_argument("workload " + name + ": option " + key + "='" + value +
                                  "' is not accepted; expected " + option->accepted);
    }
    if (!set.emplace(key, *canonical).second) {
      throw std::invalid_argument("workload " + name + ": option " + key +
                                  " is given twice; expected one value per option");
    }
  }
  return WorkloadOptionValues(table, std::move(set));
}

std::string canonical_workload_spec(const std::string& name, const WorkloadOptionValues& values) {
  std::string spec = name;
  char separator = ':';
  for (const auto& [key, value] : values.changed()) {  // std::map: sorted by key
    spec.append(1, separator).append(key).append("=").append(value);
    separator = ',';
  }
  return spec;
}

std::string workload_file_name(const std::string& canonical_spec) {
  std::string out;
  for (const char c : canonical_spec) {
    if (c == ':' || c == ',') {
      out += '.';
    } else if (c == '=') {
      out += '-';
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') {
      out += c;
    } else {
      out += '_';
    }
  }
  return out;
}

std::string workload_spec_with(const std::string& spec, const std::vector<std::string>& settings) {
  std::string out = spec;
  bool has_settings = spec.find(':') != std::string::npos;
  for (const auto& s : settings) {
    if (s.find('=') == std::string::npos) {
      throw std::invalid_argument("--workload-set '" + s +
                                  "': expected key=value, e.g. --workload-set d_model=384");
    }
    out.append(has_settings ? "," : ":").append(s);
    has_settings = true;
  }
  return out;
}

std::string describe_workload_options(const WorkloadOptionTable& table) {
  std::string out;
  for (const auto& o : table) {
    out += "  " + o.key + " (default " + o.default_value + "): " + o.meaning + "; " + o.accepted +
           "\n";
  }
  return out;
}

}  // namespace fp8lab::experiments
