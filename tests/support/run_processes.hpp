// The process of a sweep's run, found by its command line (fp8lab run ... --run-id ID): for tests
// that kill one run of a running sweep.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fp8lab::testing {

// The pid of the process whose command line holds "--run-id <run_id>", or 0 when none runs.
inline pid_t pid_of_run(const std::string& run_id) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string command((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (command.find(std::string("--run-id") + '\0' + run_id + '\0') != std::string::npos) {
      return static_cast<pid_t>(std::stol(name));
    }
  }
  return 0;
}

}  // namespace fp8lab::testing
