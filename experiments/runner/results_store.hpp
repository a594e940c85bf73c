// The output directory of fp8lab run / sweep, and how records reach it safely. No LibTorch.
//
//   DIR/runs/<run_id>.json        one record per run (baselines too), a single JSON line, written
//                                 atomically: temp file in the same directory, fsync, rename,
//                                 fsync of the directory. A file here means the run is done.
//   DIR/baselines/<run_id>.pt     the baseline's weights and gradients at its eval steps
//   DIR/sweep.json                the sweep's requested combinations and the run standing for each
//   DIR/results.jsonl, summary.csv, report.md, report.html   written by `fp8lab report DIR`
//
// One file per run, not appends to one shared file: parallel jobs and Slurm array tasks on a
// shared file system never write the same file, a killed process leaves at most a temp file
// (ignored), and --resume only has to look at file names. The report merges them.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>
#include <string>

namespace fp8lab::experiments {

inline constexpr int kResultsSchemaVersion = 1;  // docs/results-schema.md

// Writes `text` to `path` atomically (see above); creates the parent directory. Throws
// std::runtime_error naming the path and errno's message on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

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
  // Run ids that have a record file (done: finished, diverged or failed).
  std::set<std::string> recorded_run_ids() const;
  bool has_record(const std::string& run_id) const;

 private:
  std::filesystem::path root_;
};

// A run id becomes a file name: it must be non-empty and made of [A-Za-z0-9._-] only, else
// std::invalid_argument names it.
void check_run_id(const std::string& run_id);

}  // namespace fp8lab::experiments
