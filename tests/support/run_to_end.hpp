// Runs a command (the fp8lab executable, in tests) to its end with stdout and stderr appended to
// `log`; its exit status, or 128 + the signal that killed it.
#pragma once

#include <sys/wait.h>

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/runner/child_process.hpp"

namespace fp8lab::testing {

inline int run_to_end(const std::vector<std::string>& arguments, const std::filesystem::path& log) {
  const pid_t pid = experiments::start_child(arguments, log);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace fp8lab::testing
