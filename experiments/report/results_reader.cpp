#include "experiments/report/results_reader.hpp"

#include <algorithm>
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

void check_record(const nlohmann::json& record, const std::filesystem::path& path,
                  std::size_t line) {
  if (!record.is_object()) throw ResultsFileError(path, line, "a record must be a JSON object");
  for (const char* field : {"schema_version", "run_id", "kind", "status", "workload"}) {
    if (!record.contains(field)) {
      throw ResultsFileError(path, line, std::string("record has no field '") + field + "'");
    }
  }
  const auto& version = record["schema_version"];
  if (!version.is_number_integer() || version.get<int>() < 1 ||
      version.get<int>() > kResultsSchemaVersion) {
    throw ResultsFileError(path, line,
                           "schema_version " + version.dump() + " is not one this fp8lab reads "
                           "(1.." + std::to_string(kResultsSchemaVersion) + ")");
  }
  const auto status = record["status"].get<std::string>();
  if (status != "finished" && status != "diverged" && status != "failed") {
    throw ResultsFileError(path, line, "status '" + status +
                                           "' is not one of finished, diverged, failed");
  }
}

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
    check_record(record, path, line);
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
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(results.runs_directory())) {
      for (const auto& entry : std::filesystem::directory_iterator(results.runs_directory())) {
        const auto name = entry.path().filename().string();
        if (name.starts_with(".") || entry.path().extension() != ".json") continue;
        files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
    } else if (std::filesystem::exists(results.results_path())) {
      files.push_back(results.results_path());
    } else {
      throw std::runtime_error(directory.string() + " holds no results: neither runs/ nor "
                               "results.jsonl (is it an fp8lab run or sweep output directory?)");
    }
    for (const auto& file : files) {
      for (auto& record : read_run_records(file)) {
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
