#include "experiments/sweep/child_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "experiments/results/no_follow.hpp"

namespace fp8lab::experiments {

std::filesystem::path current_executable() { return "/proc/self/exe"; }

std::filesystem::path find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream directories(path != nullptr ? path : "/usr/bin:/bin");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    const auto candidate = std::filesystem::path(directory.empty() ? "." : directory) / program;
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate, error) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

pid_t start_child(const std::vector<std::string>& arguments,
                  const std::filesystem::path& log_path) {
  create_real_directory(log_path.parent_path());
  // Opened here, not in the child: a planted link is refused with a message (no_follow.hpp), and
  // the child only has to dup2 it. O_CLOEXEC keeps it out of other children; dup2 clears it.
  const int log_fd = open_no_follow(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  // Everything the child needs is prepared before fork: after fork only async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(log_fd);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(error));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);  // the parent died before prctl took effect
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  return pid;
}

std::string ChildExit::describe() const {
  if (signal) {
    return "killed by signal " + std::to_string(*signal) + " (" + ::strsignal(*signal) + ")";
  }
  return "exited with status " + std::to_string(exit_code);
}

std::optional<ChildExit> wait_for_child() {
  int status = 0;
  const pid_t pid = ::waitpid(-1, &status, 0);
  if (pid <= 0) return std::nullopt;
  ChildExit exit;
  exit.pid = pid;
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  } else {
    exit.exit_code = WEXITSTATUS(status);
  }
  return exit;
}

}  // namespace fp8lab::experiments
