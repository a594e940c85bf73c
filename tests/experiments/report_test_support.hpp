// The report tests' renderings of a list of hand-made records (tests/support/report_records.hpp):
// report.md and report.html of those records alone, every other ReportInput field at its default.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/render/html_report.hpp"
#include "experiments/render/markdown_report.hpp"
#include "experiments/stats/report_data.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::testing {

inline experiments::ReportInput report_input_of(std::vector<nlohmann::json> records) {
  experiments::ReportInput input;
  input.records = typed(records);
  return input;
}

inline std::string markdown_of(std::vector<nlohmann::json> records) {
  return experiments::render_markdown_report(report_input_of(std::move(records)));
}

inline std::string html_of(std::vector<nlohmann::json> records) {
  return experiments::render_html_report(report_input_of(std::move(records)));
}

}  // namespace fp8lab::testing
