#include "experiments/cli/process_environment.hpp"

extern char** environ;

namespace fp8lab::experiments::cli {

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string assignment(*entry);
    const auto eq = assignment.find('=');
    if (eq != std::string::npos) env[assignment.substr(0, eq)] = assignment.substr(eq + 1);
  }
  return env;
}

}  // namespace fp8lab::experiments::cli
