#include "experiments/sweep/run_errors.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <map>

#include "experiments/results/no_follow.hpp"

namespace fp8lab::experiments {
namespace {

constexpr const char* kErrorPrefix = "fp8lab run: error (";

}  // namespace

std::string error_line(const std::string& cause, const std::string& what) {
  return kErrorPrefix + cause + "): " + what +
         "; nothing was recorded for this run: fix the cause and rerun (fp8lab sweep --resume "
         "runs it again)";
}

RunError child_error(const std::string& run_id, const ChildExit& exit,
                     const std::filesystem::path& log) {
  RunError error{run_id, "", ""};
  if (exit.signal) {
    error.cause = "killed by signal " + std::to_string(*exit.signal);
    error.detail = "the run's process was " + exit.describe() + " before writing its record";
    return error;
  }
  if (exit.exit_code == kExitErrored) {
    // The cause the process printed last (its log may lack it: the disk may have been full).
    std::string text;
    try {
      text = read_regular_file(log).value_or("");
    } catch (const std::exception&) {
    }
    const auto at = text.rfind(kErrorPrefix);
    if (at != std::string::npos) {
      const auto start = at + std::string(kErrorPrefix).size();
      const auto close = text.find("): ", start);
      const auto end = text.find('\n', start);
      if (close != std::string::npos && close < end) {
        error.cause = text.substr(start, close - start);
        error.detail = text.substr(close + 3, end == std::string::npos ? end : end - close - 3);
        error.detail = error.detail.substr(0, error.detail.find("; nothing was recorded"));
        return error;
      }
    }
    error.cause = "an error its log does not name";
    error.detail = "the run's process exited with status " + std::to_string(kExitErrored) +
                   " (an error) and its log names no cause (was the disk full?)";
    return error;
  }
  error.cause = "exited with status " + std::to_string(exit.exit_code) + " without a record";
  error.detail = "the run's process " + exit.describe() + " without writing its record";
  return error;
}

void log_run_error(const RunError& error, const std::filesystem::path& log) {
  const std::string line = "fp8lab sweep: run " + error.run_id + " errored (" + error.cause +
                           "): " + error.detail + "; log: " + log.string() +
                           ". No record was written: --resume runs it again\n";
  std::fputs(line.c_str(), stderr);
  try {
    const int fd = open_no_follow(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    [[maybe_unused]] const auto written = ::write(fd, line.data(), line.size());
    ::close(fd);
  } catch (const std::exception&) {
    // Best effort: on a full disk the line above on stderr is what remains.
  }
}

std::string errors_summary(const std::vector<RunError>& errors, std::size_t waiting) {
  std::map<std::string, std::size_t> by_cause;
  for (const auto& e : errors) ++by_cause[e.cause];
  std::string text;
  if (!errors.empty()) {
    text = std::to_string(errors.size()) + (errors.size() == 1 ? " run" : " runs") + " errored (";
    bool first = true;
    for (const auto& [cause, n] : by_cause) {
      text.append(first ? "" : ", ").append(std::to_string(n)).append(" ").append(cause);
      first = false;
    }
    text += ")";
  }
  if (waiting > 0) {
    text.append(text.empty() ? "" : ", ")
        .append(std::to_string(waiting))
        .append(waiting == 1 ? " run waits" : " runs wait")
        .append(" for a baseline that errored");
  }
  return text + "; fix the cause and rerun with --resume";
}

}  // namespace fp8lab::experiments
