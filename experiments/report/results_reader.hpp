// Reads what runs left in one or more output directories (experiments/runner/results_store.hpp):
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

struct LoadedResults {
  std::vector<nlohmann::json> records;  // unique by run_id, baselines first, then by run_id
  std::vector<nlohmann::json> sweeps;   // each directory's sweep.json, when present
  std::vector<std::string> notes;       // e.g. a run found in two shards (kept once)
  std::map<std::string, std::filesystem::path> files;  // run id -> the file it was read from
};

// Reads and merges the given directories (shards of one sweep, or one directory). Throws
// ResultsFileError for a bad file, std::runtime_error when a directory holds no results at all.
LoadedResults load_results(const std::vector<std::filesystem::path>& directories);

}  // namespace fp8lab::experiments
