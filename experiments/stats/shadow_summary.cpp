#include "experiments/stats/shadow_summary.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "experiments/results/no_follow.hpp"

namespace fp8lab::experiments {

ShadowSummary summarize_shadow_checks(const std::string& results_directory) {
  ShadowSummary summary;
  const std::filesystem::path runs = std::filesystem::path(results_directory) / "runs";
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(runs)) {
    for (const auto& entry : std::filesystem::directory_iterator(runs)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const auto text = read_regular_file(file);  // a FIFO there is named (no_follow.hpp)
    const nlohmann::json record = nlohmann::json::parse(text.value_or(""), nullptr, false);
    ++summary.records;
    std::string line = "  " + file.stem().string() + ": ";
    if (record.is_discarded() || !record.contains("shadow_check")) {
      ++summary.without_check;
      line += "no shadow check (status " +
              (record.is_discarded() ? std::string("unreadable")
                                     : record.value("status", std::string("?"))) +
              (record.contains("error") && record["error"].is_string()
                   ? ": " + record["error"].get<std::string>()
                   : std::string()) +
              ")";
    } else if (record["shadow_check"].value("compared", std::int64_t{0}) == 0) {
      // A check that compared nothing (no call replayed) could not have failed: not clean.
      ++summary.without_check;
      line += "shadow check compared no value (status " + record.value("status", std::string("?")) +
              ")";
    } else {
      const nlohmann::json& check = record["shadow_check"];
      const auto mismatches = check.value("mismatches", std::int64_t{0});
      summary.mismatches += mismatches;
      line += record.value("backend", std::string("?")) + " vs sim, " + std::to_string(mismatches) +
              " mismatches in " + std::to_string(check.value("compared", std::int64_t{0})) +
              " values, " + std::to_string(check.value("operations", std::int64_t{0})) +
              " calls (status " + record.value("status", std::string("?")) + ")";
    }
    summary.text += line + "\n";
  }
  summary.text = "shadow check: " + std::to_string(summary.mismatches) + " mismatches, " +
                 std::to_string(summary.without_check) + " of " + std::to_string(summary.records) +
                 " records without a check (" + runs.string() + ")\n" + summary.text;
  return summary;
}

}  // namespace fp8lab::experiments
