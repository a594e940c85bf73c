#include "experiments/cli/option_checks.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <optional>

#include "experiments/workloads/registry.hpp"
#include "recipes/error.hpp"
#include "recipes/fields.hpp"

namespace fp8lab::experiments::cli {
namespace {

std::optional<std::int64_t> parse_whole_number(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

CLI::Validator whole_number_check(std::int64_t minimum, const std::string& accepted) {
  return CLI::Validator(
      [minimum, accepted](std::string& text) -> std::string {
        const auto value = parse_whole_number(text);
        if (value && *value >= minimum) return {};
        return "'" + text + "' is not accepted; expected " + accepted;
      },
      accepted);
}

}  // namespace

CLI::Validator whole_number_at_least(std::int64_t minimum) {
  return whole_number_check(minimum, "a whole number >= " + std::to_string(minimum));
}

CLI::Validator whole_number() {
  return whole_number_check(std::numeric_limits<std::int64_t>::min(),
                            "a whole number from -2^63 to 2^63 - 1");
}

CLI::Validator recipe_field_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto fields = recipes::recipe_field_names();
        if (std::find(fields.begin(), fields.end(), text) != fields.end()) return {};
        std::string message = "'" + text + "' is not a recipe field; accepted: " +
                              recipes::all_field_names();
        if (const auto near = recipes::did_you_mean(text, fields); !near.empty()) {
          message += " (did you mean '" + near + "'?)";
        }
        return message;
      },
      "FIELD");
}

CLI::Validator workload_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto names = workload_names();
        if (std::find(names.begin(), names.end(), text) != names.end()) return {};
        std::string message = "unknown workload '" + text + "'; accepted:";
        for (const auto& name : names) message.append(" ").append(name);
        if (const auto near = recipes::did_you_mean(text, names); !near.empty()) {
          message += " (did you mean '" + near + "'?)";
        }
        return message;
      },
      "WORKLOAD");
}

CLI::Validator output_directory() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::error_code error;
        if (!std::filesystem::exists(text, error) || std::filesystem::is_directory(text, error)) {
          return {};
        }
        return "'" + text + "' exists and is not a directory; expected a directory (created "
               "when absent)";
      },
      "DIR");
}

}  // namespace fp8lab::experiments::cli
