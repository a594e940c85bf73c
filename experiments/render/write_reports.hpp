// `fp8lab report DIR...`: merges the run records of one or more directories (the shards of a sweep)
// and writes results.jsonl, summary.csv, contrasts.csv, report.md and report.html (and
// lr_sensitivity.csv when the records vary the learning rate) into the output directory, each
// atomically. No LibTorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "experiments/results/results_reader.hpp"

namespace fp8lab::experiments {

struct ReportOptions {
  std::vector<std::filesystem::path> inputs;  // directories to merge
  std::filesystem::path output;               // where the reports go (default: inputs[0])
  std::vector<std::string> heatmap_axes;      // two recipe fields, or empty
  // heatmap_axes the records do not both vary: false (`fp8lab report`) throws the
  // check_heatmap_axes error; true (a sweep's own report, whose axes were checked against the
  // whole sweep, while its directory may hold one shard's runs) uses the default axes and says so
  // in a note.
  bool default_axes_when_not_varied = false;
  // Two different records of one run id (results_reader.hpp): refused, or the newest kept.
  ConflictChoice conflicts = ConflictChoice::refuse;
};

struct ReportPaths {
  std::filesystem::path results_jsonl, summary_csv, contrasts_csv, report_md, report_html;
  std::size_t records = 0;
  std::vector<std::string> chosen;   // --prefer newest: which record of each conflict was kept
  std::vector<std::string> missing;  // requested runs without a record (incomplete_sweep.hpp)
  // lr_sensitivity.csv (lr_report.hpp), written when the records vary the learning rate.
  std::optional<std::filesystem::path> lr_sensitivity_csv;
};

// Throws ResultsFileError (results_reader.hpp) for a corrupt or truncated record file.
ReportPaths write_reports(const ReportOptions& options);

}  // namespace fp8lab::experiments
