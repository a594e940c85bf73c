// Runs of a sweep execute in child processes of `fp8lab sweep` (this executable again, as
// `fp8lab run ...`): one run per process keeps each run deterministic and its torch state its own,
// isolates crashes (a run that dies is recorded as failed, the sweep goes on), and lets --jobs N run
// N at once. Linux only: children die with the parent (PR_SET_PDEATHSIG), so a killed sweep leaves
// no run behind that could finish later and race a --resume. No LibTorch.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab::experiments {

// The running executable, as a path that execv in a forked child resolves to this very binary:
// "/proc/self/exe". Not the file name it resolves to, which a rebuild during a long sweep replaces
// (the link then reads "... (deleted)"): every run of a sweep runs the binary that started it.
std::filesystem::path current_executable();

// `program` in the first directory of $PATH that holds it as an executable file, as execvp would
// find it (start_child takes a path); empty when none does.
std::filesystem::path find_on_path(const std::string& program);

// Starts `arguments` (arguments[0] is the program path), stdout and stderr appended to log_path.
// Throws std::runtime_error when fork fails.
pid_t start_child(const std::vector<std::string>& arguments, const std::filesystem::path& log_path);

struct ChildExit {
  pid_t pid = 0;
  int exit_code = 0;             // when exited normally
  std::optional<int> signal;     // when killed by a signal
  std::string describe() const;  // "exited with status 3" / "killed by signal 9 (Killed)"
};

// Waits for any child; nullopt when interrupted by a signal (EINTR) or when there is none.
std::optional<ChildExit> wait_for_child();

}  // namespace fp8lab::experiments
