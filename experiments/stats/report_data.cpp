#include "experiments/stats/report_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
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

std::string recipe_label_of(const RunRecord& record) {
  return record.recipe_label.value_or(record.run_id);
}

std::string run_label(const RunRecord& record) {
  const auto label = recipe_label_of(record);
  return record.label_workload.empty() ? label : label + " (" + record.label_workload + ")";
}

std::pair<std::string, std::vector<std::string>> split_workload_spec(const std::string& spec) {
  const auto colon = spec.find(':');
  std::vector<std::string> settings;
  if (colon == std::string::npos) return {spec, settings};
  std::size_t start = colon + 1;
  while (start <= spec.size()) {
    const auto comma = spec.find(',', start);
    const auto end = comma == std::string::npos ? spec.size() : comma;
    if (end > start) settings.push_back(spec.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {spec.substr(0, colon), settings};
}

namespace {

// A spec's options: option -> value as written ("smooth_swiglu=true"; a bare "x" maps to "").
std::map<std::string, std::string> spec_options(const std::vector<std::string>& settings) {
  std::map<std::string, std::string> out;
  for (const auto& s : settings) {
    const auto equals = s.find('=');
    out[s.substr(0, equals)] = equals == std::string::npos ? "" : s.substr(equals + 1);
  }
  return out;
}

// An option's value for the label: as the spec sets it, else the record's resolved value.
std::string option_value(const RunRecord& record, const std::map<std::string, std::string>& spec,
                         const std::string& option) {
  if (const auto it = spec.find(option); it != spec.end()) return it->second;
  const auto options = record.other.find("workload_options");
  if (options != record.other.end() && options->is_object()) {
    const auto value = options->find(option);
    if (value != options->end()) {
      return value->is_string() ? value->get<std::string>() : value->dump();
    }
  }
  return "default";
}

}  // namespace

void label_workload_differences(std::vector<RunRecord>& records) {
  struct Parsed {
    std::string name;
    std::map<std::string, std::string> options;
  };
  std::vector<Parsed> parsed;
  std::set<std::string> names;
  for (const auto& r : records) {
    auto [name, settings] = split_workload_spec(r.workload);
    names.insert(name);
    parsed.push_back({name, spec_options(settings)});
  }
  // workload name -> option -> the values its records set (nullopt: a record that does not).
  std::map<std::string, std::map<std::string, std::set<std::optional<std::string>>>> values;
  for (const auto& p : parsed) {
    for (const auto& option : p.options) values[p.name][option.first];
  }
  for (const auto& p : parsed) {
    for (auto& [option, seen] : values[p.name]) {
      const auto it = p.options.find(option);
      seen.insert(it == p.options.end() ? std::nullopt : std::optional<std::string>(it->second));
    }
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& p = parsed[i];
    std::string varied;
    for (const auto& [option, seen] : values[p.name]) {
      if (seen.size() < 2) continue;
      varied += (varied.empty() ? "" : ",") + option + "=" +
                option_value(records[i], p.options, option);
    }
    records[i].label_workload = names.size() > 1 ? p.name + (varied.empty() ? "" : ":" + varied)
                                                 : varied;
  }
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
