#include "experiments/sweep/slurm_script.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace fp8lab::experiments {
namespace {

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

// A job name sbatch keeps as one word: the sweep's name with anything else than [A-Za-z0-9._-]
// made '_'.
std::string job_name(const std::string& sweep_name) {
  std::string name = "fp8lab-" + (sweep_name.empty() ? std::string("sweep") : sweep_name);
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '_' && c != '-') {
      c = '_';
    }
  }
  return name;
}

}  // namespace

std::string slurm_time_problem(const std::string& text) {
  static const std::string accepted =
      "minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes, "
      "days-hours:minutes:seconds (whole numbers) or UNLIMITED";
  if (text == "UNLIMITED" || text == "INFINITE") return {};
  // days-... takes the same 1 to 3 clock fields after the dash as the forms without days.
  std::string clock = text;
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    if (!all_digits(text.substr(0, dash))) return "'" + text + "': expected " + accepted;
    clock = text.substr(dash + 1);
  }
  const auto fields = split(clock, ':');
  const bool digits = !fields.empty() && std::all_of(fields.begin(), fields.end(), all_digits);
  if (!digits || fields.size() > 3) return "'" + text + "': expected " + accepted;
  return {};
}

std::string slurm_partition_problem(const std::string& text) {
  const std::string accepted = "a partition name ([A-Za-z0-9._-]) or a comma list of them";
  for (const auto& name : split(text, ',')) {
    const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
      return std::isalnum(c) != 0 || c == '.' || c == '_' || c == '-';
    });
    if (!ok) return "'" + text + "': expected " + accepted;
  }
  return text.empty() ? "'': expected " + accepted : std::string();
}

std::string slurm_output_problem(const std::filesystem::path& output) {
  const std::string text = output.string();
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == '"' || c == '\'' || c == '\\' ||
        c == '%') {
      // sbatch splits #SBATCH lines at whitespace without unquoting, and '%' starts a pattern
      // in --output.
      return "'" + text +
             "' holds whitespace, a quote, a backslash or '%', which a #SBATCH line cannot "
             "hold; choose a directory without";
    }
  }
  return {};
}

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 ||
           std::string_view("_./:=,+-@%").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::filesystem::path slurm_script_path(const std::filesystem::path& output) {
  return output / "slurm" / "sweep.sbatch";
}

std::string slurm_script(const SlurmArray& array, const SlurmSettings& settings) {
  if (array.shards < 1) {
    throw std::invalid_argument("--shards " + std::to_string(array.shards) +
                                ": expected a whole number >= 1");
  }
  if (const auto problem = slurm_output_problem(array.output); !problem.empty()) {
    throw std::invalid_argument("--out " + problem);
  }
  if (!settings.partition.empty()) {
    if (const auto problem = slurm_partition_problem(settings.partition); !problem.empty()) {
      throw std::invalid_argument("--partition " + problem);
    }
  }
  if (!settings.time.empty()) {
    if (const auto problem = slurm_time_problem(settings.time); !problem.empty()) {
      throw std::invalid_argument("--time " + problem);
    }
  }
  if (settings.array_parallel < 0) {
    throw std::invalid_argument("--array-parallel " + std::to_string(settings.array_parallel) +
                                ": expected a whole number >= 1");
  }
  const std::string out = array.output.string();
  const std::string fp8lab = shell_quote(array.executable.string());
  const std::string script = shell_quote(slurm_script_path(array.output).string());
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# " << array.sweep_file.filename().string()
    << " on Slurm, written by `fp8lab sweep --slurm` (edit the #SBATCH lines freely).\n"
    << "# One array task per shard (" << array.shards
    << "), all writing into one directory, which every node must see:\n"
    << "#   " << out << "\n"
    << "# Each task runs its shard with --resume: a task that is requeued (preempted, its node\n"
    << "# lost) or resubmitted skips the runs already recorded and reruns those that errored or\n"
    << "# waited; the claims under that directory keep two tasks from running one run.\n"
    << "#   rerun shard K:   sbatch --array=K " << script << "\n"
    << "#   cancel:          scancel JOBID\n"
    << "#   merge results:   " << fp8lab << " report " << shell_quote(out) << "\n"
    << "# Cores: each task's sweep uses the cores Slurm gives it (add --cpus-per-task=C below).\n"
    << "#SBATCH --job-name=" << job_name(array.sweep_name) << "\n"
    << "#SBATCH --array=0-" << array.shards - 1;
  if (settings.array_parallel > 0) s << "%" << settings.array_parallel;
  s << "\n"
    << "#SBATCH --output=" << out << "/slurm/shard-%a.out\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --chdir=" << out << "\n"
    << "#SBATCH --requeue\n";
  if (!settings.partition.empty()) s << "#SBATCH --partition=" << settings.partition << "\n";
  if (!settings.time.empty()) s << "#SBATCH --time=" << settings.time << "\n";
  s << "exec " << fp8lab << " sweep " << shell_quote(array.sweep_file.string()) << " --out "
    << shell_quote(out) << " --shard \"$SLURM_ARRAY_TASK_ID/" << array.shards << "\" --resume";
  for (const auto& option : array.sweep_options) s << " " << shell_quote(option);
  s << "\n";
  return s.str();
}

}  // namespace fp8lab::experiments
