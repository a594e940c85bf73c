// `fp8lab report DIR...`: merges the run records of one or more directories (the shards of a sweep)
// and writes results.jsonl, summary.csv, report.md and report.html into the output directory, each
// atomically. No LibTorch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab::experiments {

struct ReportOptions {
  std::vector<std::filesystem::path> inputs;  // directories to merge
  std::filesystem::path output;               // where the reports go (default: inputs[0])
  std::vector<std::string> heatmap_axes;      // two recipe fields, or empty
};

struct ReportPaths {
  std::filesystem::path results_jsonl, summary_csv, report_md, report_html;
  std::size_t records = 0;
};

// Throws ResultsFileError (results_reader.hpp) for a corrupt or truncated record file.
ReportPaths write_reports(const ReportOptions& options);

}  // namespace fp8lab::experiments
