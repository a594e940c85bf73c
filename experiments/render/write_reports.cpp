#include "experiments/render/write_reports.hpp"

#include <set>
#include <sstream>
#include <stdexcept>

#include "experiments/render/contrasts_csv.hpp"
#include "experiments/render/html_report.hpp"
#include "experiments/render/lr_report.hpp"
#include "experiments/render/markdown_report.hpp"
#include "experiments/render/summary_csv.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/stats/analysis.hpp"
#include "experiments/stats/cross_machine.hpp"
#include "experiments/stats/incomplete_sweep.hpp"
#include "experiments/stats/multiplicity.hpp"
#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"
#include "recipes/heatmap_axes.hpp"

namespace fp8lab::experiments {

ReportPaths write_reports(const ReportOptions& options) {
  if (options.inputs.empty()) throw std::invalid_argument("report: no input directory");
  auto loaded = load_results(options.inputs, options.conflicts);
  ReportInput input;
  input.records = std::move(loaded.records);
  label_workload_differences(input.records);  // rows that differ only in the workload
  input.notes = std::move(loaded.notes);
  for (auto& note : cross_machine_notes(input.records)) input.notes.push_back(std::move(note));
  input.heatmap_axes = options.heatmap_axes;
  for (const auto& p : options.inputs) input.sources.push_back(p.string());
  // Shards of one sweep each hold the same sweep.json: keep each request index once.
  std::set<std::string> seen;
  std::set<double> bands, alphas;
  std::set<std::string> hypotheses;  // each shard's list, as text
  for (const auto& sweep : loaded.sweeps) {
    if (sweep.contains("alpha") && sweep["alpha"].is_number()) {
      alphas.insert(sweep["alpha"].get<double>());
    }
    if (sweep.contains("hypotheses") && sweep["hypotheses"].is_array() &&
        hypotheses.insert(sweep["hypotheses"].dump()).second && hypotheses.size() == 1) {
      input.hypotheses = pre_registered_tests(sweep["hypotheses"]);
    }
    if (sweep.contains("practical_band") && sweep["practical_band"].is_number()) {
      bands.insert(sweep["practical_band"].get<double>());
    }
    if (sweep.contains("seed_planning") && sweep["seed_planning"].is_object() &&
        !input.seed_planning) {
      const auto& planning = sweep["seed_planning"];
      input.seed_planning =
          SeedPlanning{planning.value("budget", std::size_t{0}),
                       planning.value("pilot_seeds", std::vector<std::int64_t>{})};
    }
    if (!sweep.contains("requested")) continue;
    for (const auto& q : sweep["requested"]) {
      if (seen.insert(q.dump()).second) input.requested.push_back(q);
    }
  }

  if (!bands.empty()) input.practical_band = *bands.begin();
  if (bands.size() > 1) {
    input.notes.push_back("the directories' sweeps set different practical bands; the verdicts "
                          "use the smallest, " +
                          format_percent(input.practical_band));
  }

  if (!alphas.empty()) input.alpha = *alphas.begin();
  if (alphas.size() > 1) {
    input.notes.push_back("the directories' sweeps set different alphas; the tests use the "
                          "smallest, " +
                          format_number(input.alpha, "%.3g"));
  }
  if (hypotheses.size() > 1) {
    input.notes.push_back("the directories' sweeps pre-register different hypotheses; the "
                          "report's confirmatory family is the first directory's");
  }

  if (!options.heatmap_axes.empty()) {
    try {
      recipes::check_heatmap_axes(options.heatmap_axes, varied_recipe_axes(input.records));
    } catch (const std::invalid_argument& e) {
      if (!options.default_axes_when_not_varied) throw;
      input.notes.push_back(std::string(e.what()) +
                            ". The heatmap here uses the default axes (the two most varied "
                            "fields); `fp8lab report` over every shard's directory can use the "
                            "chosen ones");
      input.heatmap_axes.clear();
    }
  }

  const auto out = options.output.empty() ? options.inputs.front() : options.output;
  const auto out_absolute = std::filesystem::absolute(out).lexically_normal();
  for (const auto& [id, file] : loaded.files) {
    const auto absolute = std::filesystem::absolute(file).lexically_normal();
    input.record_files[id] = absolute.lexically_relative(out_absolute).string();
  }
  // Sidecars lie under the directory a record was read from: DIR for DIR/results.jsonl, and for
  // DIR/runs/<id>.json too.
  for (const auto& record : input.records) {
    const auto& id = record.run_id;
    const auto file = loaded.files.find(id);
    if (file == loaded.files.end()) continue;
    auto directory = file->second.parent_path();
    if (directory.filename() == "runs") directory = directory.parent_path();
    if (record.layer_stats_sidecar.has_value()) {
      input.layer_stats_files[id] = directory / std::filesystem::path(*record.layer_stats_sidecar);
    }
    if (record.probe_sidecar.has_value()) {
      input.probe_files[id] = directory / std::filesystem::path(*record.probe_sidecar);
    }
  }
  ReportPaths paths{out / "results.jsonl", out / "summary.csv",
                    out / "contrasts.csv", out / "report.md",
                    out / "report.html",   input.records.size(),
                    loaded.chosen,         missing_runs(input.requested, input.records),
                    std::nullopt};
  std::ostringstream jsonl;
  for (const auto& r : input.records) jsonl << to_json(r).dump() << '\n';
  write_file_atomically(paths.results_jsonl, jsonl.str());
  const ReportFacts facts(input);  // once, for every file below
  write_file_atomically(paths.summary_csv, render_summary_csv(input, facts));
  write_file_atomically(paths.contrasts_csv, render_contrasts_csv(input, facts));
  write_file_atomically(paths.report_md, render_markdown_report(input, facts));
  write_file_atomically(paths.report_html, render_html_report(input, facts));
  // The learning-rate analysis's figures, when the records vary the learning rate.
  if (const auto lr_csv = render_lr_sensitivity_csv(facts); !lr_csv.empty()) {
    paths.lr_sensitivity_csv = out / "lr_sensitivity.csv";
    write_file_atomically(*paths.lr_sensitivity_csv, lr_csv);
  }
  return paths;
}

}  // namespace fp8lab::experiments
