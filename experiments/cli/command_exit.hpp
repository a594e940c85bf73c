// How `fp8lab run`, `sweep` and `report` end, written once (docs/architecture.md, "Errors and
// results"): the body's own exit code (0 done, 1 a failed run or a shadow mismatch, 3 runs errored,
// 130 interrupted); kExitErrored (3) when the body throws IoError, a failure of the machine; 2 when
// it throws anything else, which is bad input (a recipe, a spec, a file, an option's value).
#pragma once

#include <functional>
#include <string>

#include "experiments/results/io_error.hpp"

namespace fp8lab::experiments::cli {

// Runs `body` and throws CLI::RuntimeError(code) unless it ends with 0. An IoError prints
// `io_line(e)` (fp8lab run's error_line, which its sweep parses; or "<command>: error (<cause>):
// <what>; <hint>" from io_error_text), any other exception "<command>: <what>", on stderr.
void finish_command(const std::string& command, const std::function<int()>& body,
                    const std::function<std::string(const IoError&)>& io_line);

// "<command>: error (<cause>): <what>; <hint>".
std::string io_error_text(const std::string& command, const IoError& e, const std::string& hint);

}  // namespace fp8lab::experiments::cli
