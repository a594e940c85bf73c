// What the report shows of the learning-rate analysis (lr_sensitivity.hpp): two tables (the final
// eval loss and unstable count per arm and learning rate; per arm its stability edge, the edge's
// shift against the baseline with its named test, and Wortsman's LR sensitivity), one loss
// against learning rate chart per group (one line per arm), and lr_sensitivity.csv. Nothing when
// the records vary no learning rate. No LibTorch.
#pragma once

#include <string>
#include <vector>

#include "experiments/render/report_tables.hpp"
#include "experiments/render/svg_chart.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

ReportTable lr_loss_table(const ReportFacts& facts);
ReportTable lr_edge_table(const ReportFacts& facts);
// Capped final eval loss (mean over seeds) against log10 lr, one series per arm.
std::vector<LineChart> lr_charts(const ReportFacts& facts);

// One row per (group, arm, lr), the arm's edge and sensitivity figures repeated on each of its
// rows: columns in docs/results-schema.md ("lr_sensitivity.csv"). Empty when there is no
// learning-rate group.
std::string render_lr_sensitivity_csv(const ReportFacts& facts);

}  // namespace fp8lab::experiments
