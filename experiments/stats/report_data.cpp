#include "experiments/stats/report_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "experiments/stats/analysis.hpp"
#include "recipes/fields.hpp"

namespace fp8lab::experiments {

std::string format_number(std::optional<double> value, const char* format) {
  if (!value) return "-";
  if (std::isnan(*value)) return "nan";
  if (std::isinf(*value)) return *value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, *value);
  return buffer;
}

std::string format_percent(std::optional<double> fraction) {
  if (!fraction) return "-";
  return format_number(*fraction * 100.0, "%.3g") + "%";
}

const RunRecord* find_baseline(const std::vector<RunRecord>& records, const RunRecord& run) {
  if (!run.baseline_run_id.has_value()) return nullptr;
  for (const auto& r : records) {
    if (r.run_id == *run.baseline_run_id) return &r;
  }
  return nullptr;
}

std::string run_label(const RunRecord& record) {
  return record.recipe_label.value_or(record.run_id);
}

std::string underflow_summary(const RunRecord& record) {
  std::string text;
  for (const char* tensor : {"input", "weight", "grad_output"}) {
    if (!record.final.has_value()) break;
    const auto v = record.final->underflow_fraction(tensor).get();
    if (!v) continue;
    text.append(text.empty() ? "" : ", ").append(tensor).append(" ").append(format_percent(v));
  }
  return text.empty() ? text : "underflowed at the last logged step: " + text;
}

namespace {

// Whether two recipe fields split the FP8 runs the same way (each value of one goes with one value
// of the other, e.g. scaling and use_mxfp8_block_scaling): a heatmap over both is a diagonal.
bool same_split(const std::vector<RunRecord>& records, const std::string& a, const std::string& b) {
  std::set<std::string> as, bs;
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& r : records) {
    if (!is_fp8_run(r)) continue;
    as.insert(recipe_value(r, a));
    bs.insert(recipe_value(r, b));
    pairs.insert({recipe_value(r, a), recipe_value(r, b)});
  }
  return pairs.size() == as.size() && pairs.size() == bs.size();
}

}  // namespace

std::vector<std::string> heatmap_axes(const ReportInput& input) {
  if (input.heatmap_axes.size() == 2) return input.heatmap_axes;
  const auto varied = varied_recipe_axes(input.records);
  std::vector<std::string> axes;
  for (const auto& field : varied) {
    if (axes.size() == 2) break;
    if (axes.empty() || !same_split(input.records, axes[0], field)) axes.push_back(field);
  }
  return axes;
}

std::string record_link(const ReportInput& input, const RunRecord& record) {
  const auto& id = record.run_id;
  const auto it = input.record_files.find(id);
  return it != input.record_files.end() ? it->second : "runs/" + id + ".json";
}

}  // namespace fp8lab::experiments
