#include "experiments/report/report_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "experiments/report/analysis.hpp"
#include "recipes/error.hpp"
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

std::optional<double> number_at(const nlohmann::json& record, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!record.contains(p)) return std::nullopt;
  return number_or_null(record[p]);
}

const nlohmann::json* find_baseline(const std::vector<nlohmann::json>& records,
                                    const nlohmann::json& run) {
  if (!run.contains("baseline_run_id") || !run["baseline_run_id"].is_string()) return nullptr;
  const auto id = run["baseline_run_id"].get<std::string>();
  for (const auto& r : records) {
    if (r["run_id"] == id) return &r;
  }
  return nullptr;
}

std::string run_label(const nlohmann::json& record) {
  if (record.contains("recipe_label") && record["recipe_label"].is_string()) {
    return record["recipe_label"].get<std::string>();
  }
  return record["run_id"].get<std::string>();
}

std::string underflow_summary(const nlohmann::json& record) {
  std::string text;
  for (const char* tensor : {"input", "weight", "grad_output"}) {
    const auto pointer = std::string("/final/") + tensor + "_underflow_fraction";
    const auto v = number_at(record, pointer.c_str());
    if (!v) continue;
    text.append(text.empty() ? "" : ", ").append(tensor).append(" ").append(format_percent(v));
  }
  return text.empty() ? text : "underflowed at the last logged step: " + text;
}

namespace {

// Whether two recipe fields split the FP8 runs the same way (each value of one goes with one value
// of the other, e.g. scaling and use_mxfp8_block_scaling): a heatmap over both is a diagonal.
bool same_split(const std::vector<nlohmann::json>& records, const std::string& a,
                const std::string& b) {
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

std::string record_link(const ReportInput& input, const nlohmann::json& record) {
  const auto id = record["run_id"].get<std::string>();
  const auto it = input.record_files.find(id);
  return it != input.record_files.end() ? it->second : "runs/" + id + ".json";
}

void check_heatmap_axes(const std::vector<std::string>& axes,
                        const std::vector<std::string>& varied) {
  std::string given, accepted;
  for (const auto& a : axes) given += (given.empty() ? "" : ",") + a;
  for (const auto& v : varied) accepted += (accepted.empty() ? "" : ", ") + v;
  const std::string options =
      varied.size() >= 2
          ? "; accepted: two different recipe fields these runs vary: " + accepted
          : "; accepted: none, these runs vary " +
                (varied.empty() ? std::string("no recipe field") : "only " + accepted) +
                " (a heatmap needs two): drop --heatmap-axes";
  const std::string flag = "--heatmap-axes '" + given + "': ";
  if (axes.size() != 2) throw std::invalid_argument(flag + "expected two fields" + options);
  if (axes[0] == axes[1]) {
    throw std::invalid_argument(flag + "names '" + axes[0] + "' twice" + options);
  }
  for (const auto& axis : axes) {
    if (!recipes::is_recipe_field(axis)) {
      const auto guess = recipes::did_you_mean(axis, recipes::recipe_field_names());
      throw std::invalid_argument(flag + "'" + axis + "' is not a recipe field" +
                                  (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                                  options);
    }
    if (std::find(varied.begin(), varied.end(), axis) == varied.end()) {
      throw std::invalid_argument(
          flag + "'" + axis + "' is a recipe field these runs do not vary (one value)" + options);
    }
  }
}

}  // namespace fp8lab::experiments
