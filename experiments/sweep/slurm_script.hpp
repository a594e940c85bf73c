// The sbatch script of `fp8lab sweep --slurm` (docs/architecture.md, "Where the scheduler sits"):
// one Slurm array task per shard, every task running the same fp8lab binary as
// `sweep FILE --out DIR --shard $SLURM_ARRAY_TASK_ID/N --resume` into one DIR that the nodes
// share. --resume is what makes a requeued or resubmitted task safe: it skips the runs already
// recorded and reruns those that errored or waited (sweep_driver.hpp), and the claims under DIR
// keep two tasks from running one run (directory_lock.hpp). Only the text and its checks live
// here; slurm_submit.hpp writes and submits it. No LibTorch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab::experiments {

// The scheduler's settings, each a #SBATCH line when given.
struct SlurmSettings {
  std::string partition;   // empty: the cluster's default partition
  std::string time;        // empty: the partition's default time limit
  int array_parallel = 0;  // array tasks at once (--array=0-(N-1)%P); 0: no limit of ours
};

// The array job: what each task runs.
struct SlurmArray {
  std::string sweep_name;            // the job's name is fp8lab-<sweep_name>
  std::filesystem::path executable;  // absolute: the fp8lab that wrote the script
  std::filesystem::path sweep_file;  // absolute
  std::filesystem::path output;      // absolute --out, shared by every task
  int shards = 1;                    // array tasks 0 .. shards-1
  // The user's other sweep options, passed to every task as they are ("--steps", "20", ...).
  std::vector<std::string> sweep_options;
};

// "" when `text` is a time limit sbatch accepts (minutes, minutes:seconds, hours:minutes:seconds,
// days-hours, days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED), else what is
// accepted. Checked here so that a typo stops before submission, not in sbatch's own words.
std::string slurm_time_problem(const std::string& text);
// "" when `text` is a comma list of partition names ([A-Za-z0-9._-]+), else what is accepted.
std::string slurm_partition_problem(const std::string& text);
// "" when the absolute --out `output` can stand in a #SBATCH line (sbatch splits those lines at
// whitespace and does not unquote them, and '%' starts a pattern in --output), else why not.
std::string slurm_output_problem(const std::filesystem::path& output);

// `text` as one word for bash: as it is when it holds only [A-Za-z0-9_./:=,+-@%], else in single
// quotes (a quote inside as '\'').
std::string shell_quote(const std::string& text);

// DIR/slurm/sweep.sbatch; the tasks' output goes to DIR/slurm/shard-<task>.out.
std::filesystem::path slurm_script_path(const std::filesystem::path& output);

// The script: a comment saying what it runs and how to rerun, cancel and merge, the #SBATCH lines,
// then one command (exec, so that Slurm's SIGTERM on scancel or preemption reaches the sweep,
// which stops its runs and records nothing for them). Throws std::invalid_argument when a setting
// or the output path is refused by the checks above, or shards < 1.
std::string slurm_script(const SlurmArray& array, const SlurmSettings& settings);

}  // namespace fp8lab::experiments
