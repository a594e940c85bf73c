#include "experiments/render/report_layout.hpp"

#include "experiments/render/lr_report.hpp"
#include "experiments/render/probe_report.hpp"

namespace fp8lab::experiments {

void draw_report(const ReportInput& input, const ReportFacts& facts, ReportCanvas& canvas) {
  canvas.head(report_head(input, facts));
  // The probes lead (issue 41): they resolve with one seed what the loss tables below cannot.
  if (const auto probes = probe_section(input, facts)) {
    for (const auto& table : probes->tables) canvas.table(table);
    canvas.line_charts({probes->error_chart});
    for (const auto& h : probes->heatmaps) canvas.heatmap(h.chart, h.table);
    canvas.table(probes->prediction);
  }
  canvas.table(ranked_table(input, facts));
  canvas.resolution(facts);
  canvas.table(contrasts_table(input, facts));
  canvas.table(instability_table(facts));
  canvas.table(instability_contrasts_table(facts));
  canvas.table(lr_loss_table(facts));
  canvas.line_charts(lr_charts(facts));
  canvas.table(lr_edge_table(facts));
  canvas.literature(facts);
  canvas.ablation(input);
  canvas.table(noise_floor_table(input, facts));
  canvas.table(baselines_table(input));
  canvas.table(problems_table(input, facts));
  canvas.charts(input, facts);
  canvas.layer_stats(input);
  canvas.table(throughput_table(facts));
  if (!input.notes.empty()) canvas.notes(input.notes);
}

}  // namespace fp8lab::experiments
