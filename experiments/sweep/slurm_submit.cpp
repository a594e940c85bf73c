#include "experiments/sweep/slurm_submit.hpp"

#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "experiments/results/no_follow.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/sweep/child_process.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

constexpr long kTmpfsMagic = 0x01021994;  // linux/magic.h TMPFS_MAGIC

std::string read_from(const fs::path& path, std::streamoff offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(offset);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The job id of `sbatch --parsable`'s output ("123" or "123;cluster"), or empty.
std::string parsable_job_id(const std::string& output) {
  const std::string line = output.substr(0, output.find('\n'));
  const std::string id = line.substr(0, line.find(';'));
  const bool digits = !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
  return digits ? id : std::string();
}

std::string sbatch(const fs::path& script, const fs::path& log) {
  const auto program = find_on_path("sbatch");
  if (program.empty()) {
    throw std::runtime_error(
        "sbatch is not on PATH: submit from a Slurm login node, or pass --slurm-script-only and "
        "submit " +
        script.string() + " yourself");
  }
  std::error_code ignored;
  const auto before = fs::exists(log, ignored) ? fs::file_size(log, ignored) : 0;
  const pid_t pid = start_child({program.string(), "--parsable", script.string()}, log);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::string output = read_from(log, static_cast<std::streamoff>(before));
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("sbatch " + script.string() + " failed (" +
                             (WIFEXITED(status)
                                  ? "exit status " + std::to_string(WEXITSTATUS(status))
                                  : "killed by signal " + std::to_string(WTERMSIG(status))) +
                             "): " + output + "; nothing was submitted");
  }
  const auto id = parsable_job_id(output);
  if (id.empty()) {
    throw std::runtime_error("sbatch printed no job id (\"" + output + "\"); see " + log.string());
  }
  return id;
}

std::invalid_argument unwritable(const fs::path& output, const std::string& what,
                                 const std::string& why) {
  return std::invalid_argument("--out " + output.string() + ": cannot " + what + " (" + why +
                               "); every array task writes into --out, so it must be a directory "
                               "that this machine and the nodes can write");
}

}  // namespace

void create_slurm_directory(const fs::path& output) {
  if (const auto problem = slurm_output_problem(output); !problem.empty()) {
    throw std::invalid_argument("--out " + problem);
  }
  try {
    create_real_directory(output / "slurm");
  } catch (const std::exception& e) {
    throw unwritable(output, "create " + (output / "slurm").string(), e.what());
  }
}

SlurmSubmission submit_slurm_array(const SlurmArray& array, const SlurmSettings& settings,
                                   bool submit) {
  const std::string text = slurm_script(array, settings);  // its checks first
  SlurmSubmission submission;
  submission.script = slurm_script_path(array.output);
  // Written from here, so that a --out this machine cannot write stops before submission; whether
  // other nodes see it, only they can tell (a tmpfs is local to its machine: said).
  create_slurm_directory(array.output);
  try {
    write_results_file(ResultsDirectory(array.output), "slurm/sweep.sbatch", text);
  } catch (const std::exception& e) {
    throw unwritable(array.output, "write the Slurm script there", e.what());
  }
  struct statfs filesystem {};
  if (::statfs(array.output.c_str(), &filesystem) == 0 &&
      static_cast<long>(filesystem.f_type) == kTmpfsMagic) {
    submission.warning = "--out " + array.output.string() +
                         " is on a tmpfs, which only this machine sees: array tasks on other "
                         "nodes cannot write there";
  }
  if (submit) submission.job_id = sbatch(submission.script, array.output / "slurm" / "sbatch.log");
  return submission;
}

}  // namespace fp8lab::experiments
