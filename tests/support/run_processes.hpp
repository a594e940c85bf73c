// The processes of a running sweep, found by their command lines in /proc: for tests that kill one
// run of a running sweep, or one shard's array task while it runs a run.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fp8lab::testing {

struct ProcessInfo {
  pid_t pid = 0;
  pid_t parent = 0;
  std::vector<std::string> arguments;
};

// Every process that can be read now (one that exits meanwhile is left out).
inline std::vector<ProcessInfo> processes() {
  std::vector<ProcessInfo> all;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string command((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat;
    std::getline(stat_file, stat);
    // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
    const auto close = stat.rfind(')');
    if (command.empty() || close == std::string::npos) continue;
    ProcessInfo process;
    process.pid = static_cast<pid_t>(std::stol(name));
    std::istringstream after(stat.substr(close + 1));
    std::string state;
    after >> state >> process.parent;
    std::istringstream words(command);
    for (std::string word; std::getline(words, word, '\0');) process.arguments.push_back(word);
    all.push_back(std::move(process));
  }
  return all;
}

// The value after `option` in `arguments`, or nullopt.
inline std::optional<std::string> option_value(const std::vector<std::string>& arguments,
                                               const std::string& option) {
  for (std::size_t i = 0; i + 1 < arguments.size(); ++i) {
    if (arguments[i] == option) return arguments[i + 1];
  }
  return std::nullopt;
}

// The pid of the process whose command line holds "--run-id <run_id>", or 0 when none runs. Reads
// only command lines (as before processes() existed): integrity and provenance tests poll it.
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
