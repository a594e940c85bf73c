#include "experiments/cli/option_checks.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "experiments/run/python_run.hpp"
#include "experiments/workloads/workload_catalog.hpp"
#include "recipes/error.hpp"

namespace fp8lab::experiments::cli {
namespace {

std::optional<std::int64_t> parse_whole_number(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

CLI::Validator whole_number_check(std::int64_t minimum, const std::string& accepted,
                                  std::int64_t maximum = std::numeric_limits<std::int64_t>::max()) {
  return CLI::Validator(
      [minimum, maximum, accepted](std::string& text) -> std::string {
        const auto value = parse_whole_number(text);
        if (value && *value >= minimum && *value <= maximum) return {};
        return "'" + text + "' is not accepted; expected " + accepted;
      },
      accepted);
}

// A value from names() (read when the option is parsed: workloads register at start-up).
CLI::Validator one_of(std::function<std::vector<std::string>()> names, const std::string& what,
                      const std::string& label) {
  return CLI::Validator(
      [names, what](std::string& text) -> std::string {
        const auto accepted = names();
        if (std::find(accepted.begin(), accepted.end(), text) != accepted.end()) return {};
        std::string message = "'" + text + "' is not " + what + "; accepted:";
        for (std::size_t i = 0; i < accepted.size(); ++i) {
          message.append(i == 0 ? " " : ", ").append(accepted[i]);
        }
        if (const auto near = recipes::did_you_mean(text, accepted); !near.empty()) {
          message += " (did you mean '" + near + "'?)";
        }
        return message;
      },
      label);
}

}  // namespace

CLI::Validator whole_number_at_least(std::int64_t minimum) {
  return whole_number_check(minimum, "a whole number >= " + std::to_string(minimum));
}

CLI::Validator whole_number_between(std::int64_t minimum, std::int64_t maximum,
                                    const std::string& why) {
  return whole_number_check(minimum,
                            "a whole number from " + std::to_string(minimum) + " to " +
                                std::to_string(maximum) + " (" + why + ")",
                            maximum);
}

CLI::Validator whole_number() {
  return whole_number_check(std::numeric_limits<std::int64_t>::min(),
                            "a whole number from -2^63 to 2^63 - 1");
}

CLI::Validator workload_name() {
  // The name part of NAME[:key=value,...]; the options are checked with --workload-set's.
  const auto check = one_of(workload_names, "a known workload", "WORKLOAD");
  return CLI::Validator(
      [check](std::string& text) -> std::string {
        std::string name = text.substr(0, text.find(':'));
        // A PyTorch model's runs, which fp8lab.sweep starts (run/python_run.hpp).
        if (text == kPythonWorkload && std::getenv(kPythonWorkloadVariable) != nullptr) return {};
        return check(name);
      },
      "WORKLOAD[:key=value,...]");
}

CLI::Option* list_option(CLI::Option* option) {
  return option->allow_extra_args(false)->check(CLI::Validator(
      [](std::string& text) -> std::string {
        // "--x" or "-x": an option the parser took as this one's value (its value was missing).
        if (text.size() >= 2 && text[0] == '-' && (text[1] == '-' || std::isalpha(text[1]))) {
          return "'" + text + "' is an option, not a value: give this option its value first";
        }
        return {};
      },
      ""));
}

std::vector<std::string> list_items(const std::vector<std::string>& values, const std::string& flag,
                                    const std::string& accepted) {
  std::vector<std::string> items;
  for (const auto& value : values) {
    for (std::size_t start = 0;;) {
      const auto comma = value.find(',', start);
      const auto item = value.substr(start, comma == std::string::npos ? comma : comma - start);
      if (item.empty()) {
        // A CLI::ValidationError (a ParseError): main exits 2 for it, wherever it is thrown.
        throw CLI::ValidationError(flag + " '" + value + "': an empty item; expected " + accepted);
      }
      items.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return items;
}

}  // namespace fp8lab::experiments::cli
