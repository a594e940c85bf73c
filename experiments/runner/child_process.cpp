#include "experiments/runner/child_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

namespace fp8lab::experiments {

std::filesystem::path current_executable() { return "/proc/self/exe"; }

pid_t start_child(const std::vector<std::string>& arguments,
                  const std::filesystem::path& log_path) {
  std::filesystem::create_directories(log_path.parent_path());
  // Everything the child needs is prepared before fork: after fork only async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string log = log_path.string();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);  // the parent died before prctl took effect
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
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
