// The report's sections and their order, written once (report.html and report.md alike). A
// renderer is a ReportCanvas: it draws each kind of section in its own markup and decides nothing
// about what a section says (report_tables.hpp) or where it stands. report.md has no charts: its
// canvas draws nothing for them. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "experiments/render/report_tables.hpp"
#include "experiments/render/svg_chart.hpp"
#include "experiments/stats/report_data.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

class ReportCanvas {
 public:
  virtual ~ReportCanvas() = default;
  virtual void head(const ReportHead& head) = 0;
  virtual void table(const ReportTable& table) = 0;
  // What the sweep can resolve, per family (ReportFacts::resolution_lines).
  virtual void resolution(const ReportFacts& facts) = 0;
  // literature_effects.hpp over the contrasts.
  virtual void literature(const ReportFacts& facts) = 0;
  // ablation.hpp's tables.
  virtual void ablation(const ReportInput& input) = 0;
  // Loss curves, the heatmap, trajectories, underflow and saturation.
  virtual void charts(const ReportInput& input, const ReportFacts& facts) = 0;
  // A row of line charts beside the table above them (lr_report.hpp's).
  virtual void line_charts(const std::vector<LineChart>& charts) = 0;
  // A heatmap; report.md, which has no charts, shows the same values as `as_table`.
  virtual void heatmap(const HeatmapChart& chart, const ReportTable& as_table) = 0;
  // layer_stats_report.hpp.
  virtual void layer_stats(const ReportInput& input) = 0;
  virtual void notes(const std::vector<std::string>& notes) = 0;
};

// Draws every section of the report on `canvas`, in the report's order.
// The report's sections in order onto `canvas`, from the facts of `input` (built once by the
// caller: write_reports passes the same facts to every renderer).
void draw_report(const ReportInput& input, const ReportFacts& facts, ReportCanvas& canvas);

}  // namespace fp8lab::experiments
