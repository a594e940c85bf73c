#include "experiments/cli/command_exit.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "experiments/cli/commands.hpp"
#include "experiments/sweep/run_errors.hpp"

namespace fp8lab::experiments::cli {

void finish_command(const std::string& command, const std::function<int()>& body,
                    const std::function<std::string(const IoError&)>& io_line) {
  int code = 0;
  try {
    code = body();
  } catch (const IoError& e) {
    std::fprintf(stderr, "%s\n", io_line(e).c_str());
    code = kExitErrored;
  } catch (const std::exception& e) {
    // A RecipeError, a CLI::ValidationError from list_items, a workload spec's invalid_argument:
    // bad input, whichever layer found it.
    std::fprintf(stderr, "%s: %s\n", command.c_str(), e.what());
    code = 2;
  }
  if (code != 0) throw CLI::RuntimeError(code);
}

int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the message
    return code == 0 || dynamic_cast<const CLI::RuntimeError*>(&e) != nullptr ? code : 2;
  }
  return 0;
}

std::string io_error_text(const std::string& command, const IoError& e, const std::string& hint) {
  return command + ": error (" + e.cause() + "): " + e.what() + "; " + hint;
}

}  // namespace fp8lab::experiments::cli
