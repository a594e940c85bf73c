// The output directory of fp8lab run / sweep, and how records reach it safely. No LibTorch.
//
//   DIR/runs/<run_id>.json        one record per run (baselines too), a single JSON line, written
//                                 atomically: temp file in the same directory, fsync, rename,
//                                 fsync of the directory. A valid record here means the run is
//                                 done; a file that is not one (0 bytes, truncated, a stub: see
//                                 run_record_problem) is not, and --resume sets it aside as
//                                 runs/.<run_id>.json.invalid-<n> and runs the run again.
//   DIR/baselines/<run_id>.pt     the baseline's weights and gradients at its eval steps
//   DIR/layer_stats/<run_id>.parquet   the run's per-layer statistics (layer_stats_sidecar.hpp),
//                                 written atomically before its record
//   DIR/sweep.json                the sweep's requested combinations and the run standing for each
//   DIR/results.jsonl, summary.csv, report.md, report.html   written by `fp8lab report DIR`
//   DIR/.lock-<i>-of-<n>, DIR/.lock-sweep, DIR/claims/<run_id>
//                                 sweep locks (directory_lock.hpp)
//
// One file per run, not appends to one shared file: parallel jobs and Slurm array tasks on a
// shared file system never write the same file, a killed process leaves at most a temp file
// (ignored), and --resume only has to read each run's own file. The report merges them.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fp8lab::experiments {

inline constexpr int kResultsSchemaVersion = 1;  // docs/results-schema.md

// Writes `text` to `path` atomically (see above); creates the parent directory. Throws
// std::runtime_error naming the path and errno's message on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Why `record` is not a run record this fp8lab reads, or nullopt when it is one: a JSON object with
// schema "fp8lab.run", an integer schema_version in 1..kResultsSchemaVersion, string run_id, kind
// ("fp8" | "baseline") and workload, and status "finished" | "diverged" | "unstable" | "failed".
std::optional<std::string> run_record_problem(const nlohmann::json& record);

// One runs/<run_id>.json file as read back.
struct RunRecordFile {
  std::filesystem::path path;
  bool exists = false;
  std::optional<nlohmann::json> record;  // set when the file is a valid record of its run
  std::string problem;  // otherwise why not: empty file, not one JSON object (truncated),
                        // run_record_problem, or a run_id that is not the file's name
};
RunRecordFile read_run_record_file(const std::filesystem::path& path);
// The same for the text of an existing file (the fuzz target drives this).
RunRecordFile run_record_from_text(const std::filesystem::path& path, const std::string& text);

class ResultsDirectory {
 public:
  explicit ResultsDirectory(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path runs_directory() const { return root_ / "runs"; }
  std::filesystem::path run_record_path(const std::string& run_id) const;
  std::filesystem::path baseline_trajectory_path(const std::string& run_id) const;
  std::filesystem::path sweep_path() const { return root_ / "sweep.json"; }
  std::filesystem::path results_path() const { return root_ / "results.jsonl"; }

  // Writes a run's record (one JSON line) atomically.
  void write_run_record(const nlohmann::json& record) const;
  // Run ids that have a valid record (done: finished, diverged, unstable or failed).
  std::set<std::string> recorded_run_ids() const;
  bool has_record(const std::string& run_id) const;
  // Every runs/*.json file (names starting with '.' are temp or set-aside files), sorted.
  std::vector<std::filesystem::path> run_record_paths() const;
  // The same files, read.
  std::vector<RunRecordFile> run_record_files() const;
  // Renames an invalid record file to runs/.<name>.invalid-<n> (the smallest free n), so that its
  // run runs again while its bytes stay for a post-mortem; returns the new path.
  std::filesystem::path set_aside(const RunRecordFile& file) const;
  // The same for any file of the directory (a baseline's archive: .<name>.invalid-<n> beside it).
  std::filesystem::path set_aside(const std::filesystem::path& path) const;
  // Removes the temp files (see write_file_atomically) of processes of this host that died before
  // renaming them (killed, or a full disk), in DIR, runs/, baselines/ and layer_stats/; returns
  // their paths.
  std::vector<std::filesystem::path> remove_stale_temp_files() const;

 private:
  std::filesystem::path root_;
};

// A run id becomes a file name: it must be non-empty and made of [A-Za-z0-9._-] only, else
// std::invalid_argument names it.
void check_run_id(const std::string& run_id);

}  // namespace fp8lab::experiments
