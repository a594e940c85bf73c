#include "experiments/report/results_reader.hpp"

#include <fstream>
#include <map>

#include "experiments/runner/results_store.hpp"

namespace fp8lab::experiments {

ResultsFileError::ResultsFileError(std::filesystem::path path, std::size_t line,
                                   const std::string& message)
    : std::runtime_error(path.string() + ":" + std::to_string(line) + ": " + message),
      path_(std::move(path)),
      line_(line) {}

namespace {

std::optional<nlohmann::json> read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw ResultsFileError(path, 1, std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace

std::vector<nlohmann::json> read_run_records(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ResultsFileError(path, 0, "cannot open");
  std::vector<nlohmann::json> records;
  std::string text;
  std::size_t line = 0;
  bool ended_with_newline = true;
  while (std::getline(in, text)) {
    ++line;
    ended_with_newline = !in.eof();
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw ResultsFileError(path, line,
                             std::string(ended_with_newline ? "" : "truncated record (no final "
                                                                   "newline): ") +
                                 "not valid JSON: " + e.what());
    }
    if (auto problem = run_record_problem(record)) throw ResultsFileError(path, line, *problem);
    records.push_back(std::move(record));
  }
  return records;
}

LoadedResults load_results(const std::vector<std::filesystem::path>& directories) {
  LoadedResults loaded;
  std::map<std::string, nlohmann::json> by_id;
  std::map<std::string, std::string> source_of;
  for (const auto& directory : directories) {
    ResultsDirectory results(directory);
    // (file, its records): one per runs/*.json file, or every line of results.jsonl.
    std::vector<std::pair<std::filesystem::path, std::vector<nlohmann::json>>> files;
    if (std::filesystem::is_directory(results.runs_directory())) {
      for (auto& file : results.run_record_files()) {
        // A run record file that is not a finished run's record (results_store.hpp) is an
        // unfinished or damaged run: reporting without it would hide that.
        if (!file.record) {
          throw ResultsFileError(file.path, 1,
                                 file.problem + "; not a finished run's record (rerun it with "
                                 "fp8lab sweep --resume, which sets the file aside)");
        }
        files.push_back({file.path, {std::move(*file.record)}});
      }
    } else if (std::filesystem::exists(results.results_path())) {
      files.push_back({results.results_path(), read_run_records(results.results_path())});
    } else {
      throw std::runtime_error(directory.string() + " holds no results: neither runs/ nor "
                               "results.jsonl (is it an fp8lab run or sweep output directory?)");
    }
    for (auto& [file, records] : files) {
      for (auto& record : records) {
        const auto id = record["run_id"].get<std::string>();
        if (auto it = by_id.find(id); it != by_id.end()) {
          if (it->second["status"] != record["status"]) {
            loaded.notes.push_back("run " + id + " is " + it->second["status"].get<std::string>() +
                                   " in " + source_of[id] + " but " +
                                   record["status"].get<std::string>() + " in " + file.string() +
                                   "; the first is kept");
          }
          continue;
        }
        source_of[id] = file.string();
        loaded.files[id] = file;
        by_id.emplace(id, std::move(record));
      }
    }
    if (auto sweep = read_json_file(results.sweep_path())) loaded.sweeps.push_back(*sweep);
  }
  for (auto& [id, record] : by_id) {
    if (record["kind"] == "baseline") loaded.records.push_back(record);
  }
  for (auto& [id, record] : by_id) {
    if (record["kind"] != "baseline") loaded.records.push_back(record);
  }
  return loaded;
}

}  // namespace fp8lab::experiments
