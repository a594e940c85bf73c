// Reads what runs left in one or more output directories (experiments/results/results_store.hpp):
// DIR/runs/*.json, or DIR/results.jsonl when a directory has no runs/ (a merged or copied
// report), plus DIR/sweep.json. No LibTorch.
//
// Nothing is skipped silently: a runs/*.json file that is not a finished run's record (empty,
// truncated, a stub: results_store.hpp read_run_record_file), a results.jsonl line that is not a
// run record (run_record_problem), or a schema version this build does not know throws
// ResultsFileError naming the file, the line and what is wrong.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

class ResultsFileError : public std::runtime_error {
 public:
  ResultsFileError(std::filesystem::path path, std::size_t line, const std::string& message);
  const std::filesystem::path& path() const { return path_; }
  std::size_t line() const { return line_; }

 private:
  std::filesystem::path path_;
  std::size_t line_;
};

// Every non-empty line of a JSONL file, each checked as a run record (see above).
std::vector<nlohmann::json> read_run_records(const std::filesystem::path& path);
// The same, each with its 1-based line number.
std::vector<std::pair<std::size_t, nlohmann::json>> read_numbered_run_records(
    const std::filesystem::path& path);
// The same for a file's text (`path` names it in errors; the fuzz target drives this).
std::vector<std::pair<std::size_t, nlohmann::json>> run_records_from_text(
    const std::filesystem::path& path, const std::string& jsonl);

// Two records of one run id (two directories, or two lines of results.jsonl) that disagree on
// what the run gave: status, steps_planned, steps_completed, final, eval (timings, host and
// dates may differ: shards that each ran one baseline). nullopt when they agree, else the first
// field that differs with both values.
std::optional<std::string> record_conflict(const nlohmann::json& a, const nlohmann::json& b);

// What load_results does with conflicting records of one run id: refuse (std::runtime_error
// naming both sources and the field, exit 2), or keep the newest (by finished_at, then started_at) and say so in a
// note (fp8lab report --prefer newest).
enum class ConflictChoice { refuse, newest };

struct LoadedResults {
  std::vector<RunRecord> records;      // unique by run_id, baselines first, then by run_id
  std::vector<nlohmann::json> sweeps;  // each directory's sweep.json, when present
  std::vector<std::string> notes;      // e.g. which of two conflicting records was kept
  std::vector<std::string> chosen;     // those notes alone (ConflictChoice::newest)
  std::map<std::string, std::filesystem::path> files;  // run id -> the file it was read from
};

// Reads and merges the given directories (shards of one sweep, or one directory). Throws
// ResultsFileError for a bad file, std::runtime_error when a directory holds no results at all.
// Records of one id that agree (record_conflict) are kept once.
LoadedResults load_results(const std::vector<std::filesystem::path>& directories,
                           ConflictChoice conflicts = ConflictChoice::refuse);

}  // namespace fp8lab::experiments
