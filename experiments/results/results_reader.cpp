#include "experiments/results/results_reader.hpp"

#include <map>
#include <sstream>
#include <stdexcept>

#include "experiments/results/baseline_archive.hpp"
#include "experiments/results/no_follow.hpp"
#include "experiments/results/results_files.hpp"
#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {

ResultsFileError::ResultsFileError(std::filesystem::path path, std::size_t line,
                                   const std::string& message)
    : std::runtime_error(path.string() + ":" + std::to_string(line) + ": " + message),
      path_(std::move(path)),
      line_(line) {}

namespace {

std::optional<nlohmann::json> read_json_file(const std::filesystem::path& path) {
  const auto text = read_regular_file(path);  // a FIFO there is named, never waited on
  if (!text) return std::nullopt;
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range
    throw ResultsFileError(path, 1, std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace

std::vector<nlohmann::json> read_run_records(const std::filesystem::path& path) {
  std::vector<nlohmann::json> records;
  for (auto& [line, record] : read_numbered_run_records(path)) records.push_back(std::move(record));
  return records;
}

std::vector<std::pair<std::size_t, nlohmann::json>> read_numbered_run_records(
    const std::filesystem::path& path) {
  const auto text = read_regular_file(path);
  if (!text) throw ResultsFileError(path, 0, "does not exist");
  return run_records_from_text(path, *text);
}

std::vector<std::pair<std::size_t, nlohmann::json>> run_records_from_text(
    const std::filesystem::path& path, const std::string& jsonl) {
  std::istringstream in(jsonl);
  std::vector<std::pair<std::size_t, nlohmann::json>> records;
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
    } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range
      throw ResultsFileError(path, line,
                             std::string(ended_with_newline ? ""
                                                            : "truncated record (no final "
                                                              "newline): ") +
                                 "not valid JSON: " + e.what());
    }
    if (auto problem = run_record_problem(record)) throw ResultsFileError(path, line, *problem);
    records.emplace_back(line, std::move(record));
  }
  return records;
}

std::optional<std::string> record_conflict(const nlohmann::json& a, const nlohmann::json& b) {
  for (const char* field : {"status", "steps_planned", "steps_completed", "final", "eval"}) {
    auto x = a.value(field, nlohmann::json()), y = b.value(field, nlohmann::json());
    if (x == y) continue;
    std::string name = field;
    // In an object (final), the first member that differs, so that the message shows the values.
    if (x.is_object() && y.is_object()) {
      auto keys = x;
      keys.update(y);
      for (const auto& [key, unused] : keys.items()) {
        const auto u = x.value(key, nlohmann::json()), v = y.value(key, nlohmann::json());
        if (u == v) continue;
        name += "." + key;
        x = u;
        y = v;
        break;
      }
    }
    const auto shown = [](const nlohmann::json& v) {
      const auto text = v.dump();
      return text.size() > 120 ? text.substr(0, 117) + "..." : text;
    };
    return name + " " + shown(x) + " vs " + shown(y);
  }
  return std::nullopt;
}

namespace {

// finished_at, else started_at ("YYYY-MM-DDTHH:MM:SSZ" compare as text); "" when neither.
std::string record_time(const nlohmann::json& record) {
  for (const char* field : {"finished_at", "started_at"}) {
    if (record.contains(field) && record[field].is_string()) return record[field];
  }
  return "";
}

}  // namespace

LoadedResults load_results(const std::vector<std::filesystem::path>& directories,
                           ConflictChoice conflicts) {
  LoadedResults loaded;
  std::map<std::string, nlohmann::json> by_id;
  std::map<std::string, RunRecord> typed;        // by_id's records, typed
  std::map<std::string, std::string> source_of;  // "file" or "file:line"
  for (const auto& directory : directories) {
    ResultsDirectory results(directory);
    struct Source {
      std::filesystem::path file;
      std::string where;  // the file, with ":line" for a line of results.jsonl
      std::size_t line;   // 1 for a runs/*.json file
      nlohmann::json record;
    };
    // One per runs/*.json file, or per line of results.jsonl.
    std::vector<Source> sources;
    // Its subdirectories are opened without following a link (no_follow.hpp): a planted one is
    // named, never read through.
    for (const char* sub : {"baselines", "layer_stats"}) results_subdirectory(results, sub);
    if (results_subdirectory(results, "runs")) {
      for (auto& file : results.run_record_files()) {
        // A run record file that is not a finished run's record (results_store.hpp) is an
        // unfinished or damaged run: reporting without it would hide that.
        if (!file.record) {
          throw ResultsFileError(file.path, 1,
                                 file.problem +
                                     "; not a finished run's record (rerun it with "
                                     "fp8lab sweep --resume, which sets the file aside)");
        }
        // A finished baseline's archive too, when it is there (a copied runs/ may lack it).
        const auto& record = *file.record;
        if (record["kind"] == "baseline" && record["status"] == "finished") {
          const auto archive = results.baseline_trajectory_path(record["run_id"]);
          if (std::filesystem::exists(archive)) {
            if (const auto problem = baseline_archive_problem(archive, record)) {
              throw std::runtime_error(archive.string() + ": " + *problem +
                                       "; not the archive "
                                       "of the finished baseline " +
                                       file.path.string() +
                                       " (rerun it with fp8lab sweep --resume, which sets both "
                                       "aside)");
            }
          }
        }
        sources.push_back({file.path, file.path.string(), 1, std::move(*file.record)});
      }
    } else if (std::filesystem::exists(std::filesystem::symlink_status(results.results_path()))) {
      const auto path = results.results_path();
      for (auto& [line, record] : read_numbered_run_records(path)) {
        sources.push_back(
            {path, path.string() + ":" + std::to_string(line), line, std::move(record)});
      }
    } else {
      throw std::runtime_error(directory.string() +
                               " holds no results: neither runs/ nor "
                               "results.jsonl (is it an fp8lab run or sweep output directory?)");
    }
    for (auto& [file, where, line, record] : sources) {
      const auto id = record["run_id"].get<std::string>();
      // The typed record (run_record.hpp): a field of another type is named with its file.
      RunRecord run;
      try {
        run = run_record_from_json(record);
      } catch (const std::invalid_argument& e) {
        throw ResultsFileError(file, line, e.what());
      }
      if (auto it = by_id.find(id); it != by_id.end()) {
        // Nothing is dropped silently: the same run twice is kept once, two different results
        // under one id are refused or resolved as asked, and said.
        const auto conflict = record_conflict(it->second, record);
        if (!conflict) continue;
        const std::string both = source_of[id] + " and " + where;
        if (conflicts == ConflictChoice::refuse) {
          throw std::runtime_error("run " + id + " has two different records, in " + both + " (" +
                                   *conflict +
                                   "). Remove the one that is wrong, or pass "
                                   "--prefer newest to keep the newer by finished_at");
        }
        const bool newer = record_time(record) > record_time(it->second);
        const std::string kept = newer ? where : source_of[id];
        loaded.chosen.push_back("run " + id + " has two different records, in " + both + " (" +
                                *conflict + "); --prefer newest kept " + kept + " (finished " +
                                record_time(newer ? record : it->second) + ")");
        loaded.notes.push_back(loaded.chosen.back());
        if (!newer) continue;
        it->second = std::move(record);
        typed[id] = std::move(run);
        source_of[id] = where;
        loaded.files[id] = file;
        continue;
      }
      source_of[id] = where;
      loaded.files[id] = file;
      by_id.emplace(id, std::move(record));
      typed.emplace(id, std::move(run));
    }
    if (auto sweep = read_json_file(results.sweep_path())) loaded.sweeps.push_back(*sweep);
  }
  for (auto& [id, record] : typed) {
    if (record.kind == "baseline") loaded.records.push_back(record);
  }
  for (auto& [id, record] : typed) {
    if (record.kind != "baseline") loaded.records.push_back(record);
  }
  return loaded;
}

}  // namespace fp8lab::experiments
