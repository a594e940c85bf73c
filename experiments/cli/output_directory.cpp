// option_checks.hpp's output_directory(), in a file of its own: fp8lab-quantize links it without
// the rest of option_checks.cpp (which reaches the workloads and LibTorch).
#include <filesystem>

#include "experiments/cli/option_checks.hpp"

namespace fp8lab::experiments::cli {

CLI::Validator output_directory() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "'' is empty; expected a directory (created when absent)";
        std::error_code error;
        if (!std::filesystem::exists(text, error) || std::filesystem::is_directory(text, error)) {
          return {};
        }
        return "'" + text +
               "' exists and is not a directory; expected a directory (created "
               "when absent)";
      },
      "DIR");
}

}  // namespace fp8lab::experiments::cli
