// The inputs every report writer shares: the merged records, the sweep's requested combinations,
// and small formatting helpers. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/results/run_record.hpp"
#include "experiments/stats/seed_plan.hpp"

namespace fp8lab::experiments {

// A test the sweep pre-registered (sweep.json "hypotheses"; recipes/sweep_hypotheses.hpp):
// kind "verdict" with one combination label, or "contrast" with two.
struct PreRegisteredTest {
  std::string kind;
  std::vector<std::string> labels;
};

struct ReportInput {
  std::vector<RunRecord> records;         // baselines first (results_reader.hpp)
  std::vector<nlohmann::json> requested;  // sweep.json "requested" rows of every shard, merged
  std::vector<std::string> sources;       // the directories read
  std::vector<std::string> notes;         // merge notes, shown in the reports
  // The paired verdicts' band (sweep.json practical_band; shards must agree, write_reports.hpp).
  double practical_band = 0.0025;
  double alpha = 0.05;                        // the named tests' level (sweep.json alpha)
  std::vector<PreRegisteredTest> hypotheses;  // the confirmatory family; empty: all exploratory
  std::optional<SeedPlanning> seed_planning;  // sweep.json seed_planning (seeds: auto)
  std::vector<std::string> heatmap_axes;  // two recipe fields, or empty to choose the two most varied
  // run id -> the file holding its record, relative to where the reports are written
  // ("runs/<id>.json"; "results.jsonl" for a directory read from its results.jsonl).
  std::map<std::string, std::string> record_files;
  // run id -> its layer statistics sidecar, as this process opens it (the record's
  // layer_stats_sidecar under the directory the record was read from; layer_stats_report.hpp).
  std::map<std::string, std::filesystem::path> layer_stats_files;
  // run id -> its probe sidecar, the same way (the record's probe_sidecar; probe_report.hpp).
  std::map<std::string, std::filesystem::path> probe_files;
};

// The link from a report to a run's record: input.record_files, else "runs/<run_id>.json".
std::string record_link(const ReportInput& input, const RunRecord& record);

// "%.4g"-style text for a number, "-" when absent, "inf"/"nan" spelled out.
std::string format_number(std::optional<double> value, const char* format = "%.4g");
std::string format_percent(std::optional<double> fraction);  // 0.0123 -> "1.23%"

// The baseline record a run was compared with, if present among the records.
const RunRecord* find_baseline(const std::vector<RunRecord>& records, const RunRecord& run);

// A short name for a run in tables and legends: its recipe label, else its run id, then its
// record's label_workload in parentheses when set ("current HYBRID (smooth_swiglu=true)").
std::string run_label(const RunRecord& record);
// The recipe label alone (else the run id): an arm's name where a workload option is the axis
// (the learning-rate analysis, lr_sensitivity.hpp).
std::string recipe_label_of(const RunRecord& record);

// A workload spec's name and its settings ("llama-xs:eval_every=30,lr=0.1" -> "llama-xs",
// {"eval_every=30", "lr=0.1"}).
std::pair<std::string, std::vector<std::string>> split_workload_spec(const std::string& spec);

// Sets every record's label_workload to what of its workload spec (RunRecord::workload) varies
// among the records: the workload's name when the records name more than one, then each option
// that the records of that name do not all set alike (set to different values, or set in some
// and not others), as option=value in name order, the value as the spec sets it, else the
// record's resolved value (workload_options), else "default"; "gpt-tiny:lr=0.01" when both vary,
// "lr=0.01" when only the option does. Records whose workloads do not differ keep "" (their
// labels are their recipe labels). So two report rows that differ only in a workload option
// (a sweep over llama-xs:smooth_swiglu=true and llama-xs) get different labels.
void label_workload_differences(std::vector<RunRecord>& records);

// "underflowed at the last logged step: input 98%, weight 100%, grad_output 0%" from the record's
// final figures ("" when it has none).
std::string underflow_summary(const RunRecord& record);

// The two heatmap axes: input.heatmap_axes when given, else the two most varied recipe fields,
// skipping a field that splits the runs exactly as the first does (scaling and
// use_mxfp8_block_scaling): its heatmap would be a diagonal.
std::vector<std::string> heatmap_axes(const ReportInput& input);

}  // namespace fp8lab::experiments
