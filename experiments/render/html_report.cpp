#include "experiments/render/html_report.hpp"
#include "experiments/stats/incomplete_sweep.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "experiments/render/layer_stats_report.hpp"
#include "experiments/render/report_layout.hpp"
#include "experiments/render/report_tables.hpp"
#include "experiments/render/svg_chart.hpp"
#include "experiments/stats/ablation.hpp"
#include "experiments/stats/analysis.hpp"
#include "experiments/stats/first_non_finite.hpp"
#include "experiments/stats/literature_effects.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/recipe_rows.hpp"
#include "experiments/stats/report_facts.hpp"
#include "experiments/stats/run_provenance.hpp"

namespace fp8lab::experiments {
namespace {

// Curves are grouped by verdict; each group's legend names its best kNamedPerGroup runs and counts
// the others ("+N more"), whose curves are drawn thinner in a lighter shade, each with its hover.
constexpr std::size_t kNamedPerGroup = 3;

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict-within,.verdict-equivalent,.verdict-better,.verdict-not{color:#1a7f37}
.verdict-beyond,.verdict-worse{color:#9a6700}
.verdict-inconclusive{color:#57606a}
.verdict-failed,.verdict-diverged,.verdict-unstable,.verdict-error{color:#cf222e;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #e5e5e5}
svg .title{font-size:13px;font-weight:600}svg .tick{font-size:10px;fill:#555}
svg .axis{font-size:11px;fill:#333}svg .legend{font-size:10px}svg .celltext{font-size:10px}
svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#bbb}svg .empty{font-size:12px;fill:#999}
code{font-size:12px}.note{color:#555;font-size:13px}.incomplete{color:#b00020}svg .legend-group{font-weight:600}
tr.upstream-differs td.upstream{background:#fff8c5}
)";

// Checks that every chart drew something; a chart without marks is a console error, which the
// headless-Chromium test of report.html fails on.
const char* kCheckScript = R"(
(function () {
  var charts = document.querySelectorAll('svg.chart');
  var bad = 0;
  charts.forEach(function (c) {
    var marks = c.querySelectorAll('path.series, rect.cell').length;
    if (marks === 0 && !c.querySelector('.empty')) {
      bad++;
      console.error('fp8lab report: chart without marks: ' + c.getAttribute('aria-label'));
    }
  });
  document.body.setAttribute('data-charts', String(charts.length));
  document.body.setAttribute('data-check', bad === 0 ? 'ok' : 'failed');
})();
)";

std::string verdict_class(const std::string& verdict) {
  return "verdict-" + verdict.substr(0, verdict.find(' '));
}

// (step, y) of each train or eval row; y NaN where the row has none.
template <class Row>
std::vector<std::pair<double, double>> series_of(const Field<std::vector<Row>>& rows,
                                                 Field<double> Row::*y) {
  std::vector<std::pair<double, double>> points;
  for (const auto& row : *rows) {
    points.emplace_back(static_cast<double>(row.step), (row.*y).value_or(NAN));
  }
  return points;
}

std::vector<std::pair<double, double>> moving_average(
    const std::vector<std::pair<double, double>>& points, std::size_t window) {
  std::vector<std::pair<double, double>> out;
  double sum = 0;
  std::size_t finite = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i].second)) {
      out.emplace_back(points[i].first, NAN);
      continue;
    }
    sum += points[i].second;
    ++finite;
    if (finite > window) {
      // Drop the oldest finite point of the window.
      std::size_t seen = 0;
      for (std::size_t j = i + 1; j-- > 0;) {
        if (std::isfinite(points[j].second) && ++seen == window + 1) {
          sum -= points[j].second;
          break;
        }
      }
    }
    out.emplace_back(points[i].first, sum / static_cast<double>(std::min(finite, window)));
  }
  return out;
}

// Shades of a verdict's colour: the named runs of its group, then the rest.
struct GroupColors {
  std::array<const char*, kNamedPerGroup> named;
  const char* rest;
};

GroupColors verdict_colors(const std::string& verdict) {
  if (verdict == "within tolerance") return {{"#1a7f37", "#54aeff", "#2da44e"}, "#a7d8b5"};
  if (verdict == "beyond tolerance") return {{"#9a6700", "#e16f24", "#d4a72c"}, "#f0d58c"};
  if (verdict == "failed to train") return {{"#8250df", "#bf3989", "#a475f9"}, "#d8c7f7"};
  if (verdict == "diverged") return {{"#cf222e", "#fa4549", "#82071e"}, "#ffb3b0"};
  if (verdict == "unstable") return {{"#bc4c00", "#fb8f44", "#762c00"}, "#ffd8b5"};
  return {{"#57606a", "#8c959f", "#24292f"}, "#c9d1d9"};
}

// The record's seed as text ("0" when it has none).
std::string seed_text(const RunRecord& r) { return std::to_string(r.seed.value_or(0)); }

// "HYBRID m0, seed 0: within tolerance, final eval-loss difference +0.42% (run 1a2b...)".
std::string curve_hover(const RunRecord& r, const std::string& verdict) {
  return run_label(r) + ", seed " + seed_text(r) + ": " + verdict +
         ", final eval-loss difference " +
         format_percent(r.final.has_value() ? r.final->eval_rel_diff.get() : std::nullopt) +
         " (run " + r.run_id + ")";
}

// Baseline curves (black, thick), then every run in ranked order, grouped by verdict.
LineChart curves(
    const ReportInput& input, const std::vector<const RunRecord*>& ranked,
    const NoiseFloors& floors, const std::string& title, const std::string& y_label, bool log_y,
    const std::function<std::vector<std::pair<double, double>>(const RunRecord&)>& points,
    bool with_baselines) {
  LineChart chart{title, "step", y_label, log_y, {}};
  if (with_baselines) {
    for (const auto& r : input.records) {
      if (r.kind != "baseline") continue;
      const auto label = "seed " + seed_text(r) + " " + r.workload + " (" +
                         r.high_precision.value_or("?") + ")";
      chart.series.push_back({label, points(r), "#000000", 2.5, false, "baseline", true,
                              "baseline " + label + " (run " + r.run_id + ")"});
    }
  }
  // With runs on several seeds a label names the seed too ("s1 HYBRID m0").
  std::set<std::string> seeds;
  for (const auto* r : ranked) seeds.insert(seed_text(*r));
  std::string group;
  std::size_t in_group = 0;
  for (const auto* r : ranked) {
    const auto verdict = run_verdict(*r, floors.of(*r).tolerance);
    // The seed first, so that a long label cut in the legend keeps it.
    const auto label = seeds.size() > 1 ? "s" + seed_text(*r) + " " + run_label(*r) : run_label(*r);
    if (verdict != group) in_group = 0;
    group = verdict;
    const auto colors = verdict_colors(verdict);
    const bool named = in_group < kNamedPerGroup;
    chart.series.push_back({label, points(*r), named ? colors.named[in_group] : colors.rest,
                            named ? 1.6 : 1.0, *r->status != "finished", verdict, named,
                            curve_hover(*r, verdict)});
    ++in_group;
    // A precision schedule's switches (recipes/schedule.hpp), one marker per step and run.
    if (r->schedule_switches.has_value()) {
      for (const auto& s : *r->schedule_switches) {
        chart.markers.push_back(
            {static_cast<double>(s.step), std::string("switch ").append(std::to_string(s.step)),
             label + ": stage " + std::to_string(s.stage) + " (" + s.recipe_label.value_or("?") +
                 ") from step " + std::to_string(s.step),
             chart.series.back().color});
      }
    }
  }
  return chart;
}

// One operand row per (layer, tensor): input and weight as read by fprop, grad_output by dgrad.
bool is_primary_operand(const LayerRow& row) {
  return (*row.tensor == "grad_output") ? *row.gemm == "dgrad" : *row.gemm == "fprop";
}

LineChart layer_chart(const RunRecord& record, Field<double> LayerRow::*field,
                      const std::string& title, const std::string& y_label) {
  std::map<std::string, std::vector<std::pair<double, double>>> by_operand;
  for (const auto& row : *record.layers) {
    if (!is_primary_operand(row)) continue;
    const auto key = *row.layer + "." + *row.tensor;
    by_operand[key].emplace_back(static_cast<double>(row.step.value_or(0)),
                                 (row.*field).value_or(NAN));
  }
  // Grouped by tensor (input, weight, grad_output), kNamedPerGroup layers of each named.
  LineChart chart{title, "step", y_label, true, {}};
  std::size_t t = 0;
  for (const char* tensor : {"input", "weight", "grad_output"}) {
    std::size_t i = 0;
    for (auto& [key, points] : by_operand) {
      if (key.substr(key.rfind('.') + 1) != tensor) continue;
      const bool named = i < kNamedPerGroup;
      chart.series.push_back({key, std::move(points), series_color(t * 4 + (named ? i : 3)),
                              named ? 1.4 : 0.8, false, tensor, named, key});
      ++i;
    }
    ++t;
  }
  return chart;
}

// Fraction of all quantized elements of a step that underflowed (or saturated), over every layer
// and tensor of the run.
std::vector<std::pair<double, double>> fraction_per_step(const RunRecord& record,
                                                         Field<std::int64_t> LayerRow::*field,
                                                         const std::string& only_tensor = "") {
  std::map<double, std::pair<double, double>> sums;  // step -> (field, count)
  for (const auto& row : *record.layers) {
    if (!only_tensor.empty() && *row.tensor != only_tensor) continue;
    auto& s = sums[static_cast<double>(row.step.value_or(0))];
    s.first += static_cast<double>((row.*field).value_or(0));
    s.second += static_cast<double>(row.count.value_or(0));
  }
  std::vector<std::pair<double, double>> points;
  for (const auto& [step, s] : sums) {
    points.emplace_back(step, s.second > 0 ? s.first / s.second : NAN);
  }
  return points;
}

// Axis values in numeric order when they are all numbers (0, 4, 16, 1024), else as text.
std::vector<std::string> in_natural_order(const std::set<std::string>& values) {
  std::vector<std::string> out(values.begin(), values.end());
  auto numeric = [](const std::string& v, double& x) {
    char* end = nullptr;
    x = std::strtod(v.c_str(), &end);
    return !v.empty() && end == v.c_str() + v.size();
  };
  double unused = 0;
  if (std::all_of(out.begin(), out.end(),
                  [&](const std::string& v) { return numeric(v, unused); })) {
    std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
      double x = 0, y = 0;
      numeric(a, x);
      numeric(b, y);
      return x < y;
    });
  }
  return out;
}

// Each cell: the median of |final eval-loss difference| over its runs (the other axes and the
// seeds), with n. A diverged or failed run counts as worse than any finished one (+inf in the
// median), so one bad run moves the median by one rank and no more, and a cell whose median is
// such a run shows as broken.
HeatmapChart divergence_heatmap(const std::vector<const RunRecord*>& ranked,
                                const std::vector<std::string>& axes) {
  HeatmapChart chart;
  chart.x_label = axes[0];
  chart.y_label = axes[1];
  chart.title = "final |eval-loss difference| vs baseline over " + axes[0] + " x " + axes[1] +
                ": median over the other axes and seeds, with n";
  chart.value_label = "median |relative eval-loss difference|";
  chart.format_value = [](double v) { return format_percent(v); };
  chart.broken_label = "dark red: the median run diverged or failed (such runs count as the "
                       "worst in a cell's median; \u2717 = how many)";
  std::set<std::string> xs, ys;
  struct Cell {
    std::vector<double> values;  // +inf for a run that did not finish
    int broken = 0;
  };
  std::map<std::pair<std::string, std::string>, Cell> cells;
  for (const auto* r : ranked) {
    const auto x = recipe_value(*r, axes[0]), y = recipe_value(*r, axes[1]);
    xs.insert(x);
    ys.insert(y);
    auto& c = cells[{x, y}];
    const auto rel = final_eval_rel_diff(*r);
    if (*r->status == "finished" && rel) {
      c.values.push_back(*rel);
    } else {
      c.values.push_back(INFINITY);
      ++c.broken;
    }
  }
  chart.x_values = in_natural_order(xs);
  chart.y_values = in_natural_order(ys);
  for (const auto& y : chart.y_values) {
    chart.values.emplace_back();
    chart.texts.emplace_back();
    chart.hovers.emplace_back();
    for (const auto& x : chart.x_values) {
      const auto it = cells.find({x, y});
      if (it == cells.end()) {
        chart.values.back().push_back(std::nullopt);
        chart.texts.back().push_back("");
        chart.hovers.back().push_back(axes[0] + "=" + x + ", " + axes[1] + "=" + y + ": no run");
        continue;
      }
      const auto& c = it->second;
      const double middle = *median(c.values);
      const auto n = std::to_string(c.values.size());
      const auto broken = c.broken ? " " + std::to_string(c.broken) + "\u2717" : std::string();
      chart.values.back().push_back(middle);
      chart.texts.back().push_back(
          (std::isfinite(middle) ? format_percent(middle) : std::string("broken")) + " n=" + n +
          broken);
      // The spread of the finished runs: a median of runs that disagree (other axes mixed in)
      // is a value no run had, and the hover says so.
      std::vector<double> finished;
      for (const double v : c.values) {
        if (std::isfinite(v)) finished.push_back(v);
      }
      const auto [low, high] = std::minmax_element(finished.begin(), finished.end());
      chart.hovers.back().push_back(
          axes[0] + "=" + x + ", " + axes[1] + "=" + y + ": median " +
          (std::isfinite(middle) ? format_percent(middle)
                                 : std::string("a diverged or failed run")) +
          " over n=" + n + " runs" +
          (finished.size() > 1 ? " (finished runs from " + format_percent(*low) + " to " +
                                     format_percent(*high) + ")"
                               : std::string()) +
          (c.broken ? ", of which " + std::to_string(c.broken) +
                          " diverged or failed (counted as the worst)"
                    : std::string()));
    }
  }
  return chart;
}

std::string td(const std::string& text, bool numeric = false) {
  return std::string(numeric ? "<td class=\"num\">" : "<td>") + escape_html(text) + "</td>";
}

// A report table (report_tables.hpp) as HTML: the detail of a cell on hover, a verdict cell
// coloured by its word, a row with a flagged cell highlighted.
void table_html(std::ostringstream& html, const ReportTable& table) {
  if (table.rows.empty() && table.empty.empty()) return;
  html << "<h2>" << escape_html(table.title) << "</h2>\n";
  if (table.rows.empty()) {
    html << "<p class=\"note\">" << escape_html(table.empty) << "</p>\n";
    return;
  }
  html << "<p class=\"note\">" << escape_html(table.note) << "</p>\n<table>\n<tr>";
  for (const auto& column : table.columns) html << "<th>" << escape_html(column) << "</th>";
  html << "</tr>\n";
  for (const auto& row : table.rows) {
    const bool flagged =
        std::any_of(row.begin(), row.end(), [](const auto& c) { return c.flagged; });
    html << "<tr" << (flagged ? " class=\"upstream-differs\"" : "") << ">";
    for (const auto& cell : row) {
      std::string classes = cell.numeric ? "num" : "";
      if (!cell.verdict.empty()) classes = verdict_class(cell.verdict);
      if (!cell.detail.empty()) classes = "upstream";
      html << "<td" << (classes.empty() ? "" : " class=\"" + classes + "\"");
      if (!cell.detail.empty()) html << " title=\"" << escape_html(cell.detail) << "\"";
      html << ">" << (cell.flagged ? "\u26a0 " : "");
      for (const auto& [text, href] : cell.links) {
        html << "<a href=\"" << escape_html(href) << "\"><code>" << escape_html(text)
             << "</code></a> ";
      }
      if (cell.code && !cell.text.empty()) {
        html << "<code>" << escape_html(cell.text) << "</code>";
      } else {
        html << escape_html(cell.text);
      }
      html << "</td>";
    }
    html << "</tr>\n";
  }
  html << "</table>\n";
}

// What the sweep can resolve, per family.
void resolution_list(std::ostringstream& html, const ReportFacts& facts) {
  html << "<h2>What this sweep can resolve</h2>\n<ul class=\"note\">\n";
  for (std::size_t i = 0; i < facts.resolution.size(); ++i) {
    html << "<li><code>" << escape_html(facts.resolution[i].family)
         << "</code>: " << escape_html(facts.resolution_lines[i]) << "</li>\n";
  }
  html << "</ul>\n";
}

// The layer ranking of `method: ablate` runs (ablation.hpp), one table per ablated recipe.
// Which of the published effects (L1-L5) this sweep's contrasts show (literature_effects.hpp).
void literature_section(std::ostringstream& html, const ReportFacts& facts) {
  html << "<h2>Published effects this sweep bears on</h2>\n<ul>\n";
  for (const auto& effect : literature_effects(facts.contrasts)) {
    html << "<li><b>" << escape_html(effect.id) << "</b> " << escape_html(effect.claim) << ": "
         << escape_html(effect.summary);
    if (!effect.lines.empty()) {
      html << "\n<ul>\n";
      for (const auto& line : effect.lines) html << "<li>" << escape_html(line) << "</li>\n";
      html << "</ul>";
    }
    html << "</li>\n";
  }
  html << "</ul>\n";
}

void ablation_section(std::ostringstream& html, const ReportInput& input) {
  const auto tables = ablation_tables(input.records);
  if (tables.empty()) return;
  html << "<h2>Layer ablation: which Linears carry the loss gap</h2>\n<p class=\"note\">Paired "
       << "over seeds against each seed's baseline (final eval loss, relative): <i>removed</i> = "
       << "(all FP8 - all FP8 but this one in high precision), <i>alone</i> = (only this one in "
       << "FP8 - baseline); shares are over the gap, their mean ranks the rows; 95% "
       << "t-intervals.</p>\n";
  for (const auto& t : tables) {
    html << "<h3>" << escape_html(t.workload) << ": " << escape_html(t.recipe_label)
         << "</h3>\n<p>gap " << escape_html(t.gap ? describe_interval(*t.gap) : "not measured")
         << "; chaos floor (null runs): "
         << escape_html(t.chaos_floor.empty() ? "not measured" : t.chaos_floor)
         << "</p>\n<table>\n<tr><th>rank</th><th>layer</th><th>GEMM</th><th>share</th>"
         << "<th>removed (paired)</th><th>alone (paired)</th></tr>\n";
    for (const auto* rows : {&t.layers, &t.gemms}) {
      for (std::size_t i = 0; i < rows->size(); ++i) {
        const auto& r = (*rows)[i];
        html << "<tr>" << td(std::to_string(i + 1), true) << td(r.layer) << td(r.gemm)
             << td(format_percent(r.share), true) << td(interval_text(r.removed), true)
             << td(interval_text(r.alone), true) << "</tr>\n";
      }
    }
    html << "</table>\n";
    if (!t.notes.empty()) {
      html << "<ul class=\"note\">\n";
      for (const auto& n : t.notes) html << "<li>" << escape_html(n) << "</li>\n";
      html << "</ul>\n";
    }
  }
}

// The baselines per family: seeds, final eval losses, the noise floor and what verdicts used.

// The head: sources, verdict counts, the rules and the floors beside the verdicts.
void head(std::ostringstream& html, const ReportHead& head) {
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<title>fp8lab report</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  html << "<h1>fp8lab report</h1>\n";
  if (!head.incomplete.empty()) {
    html << "<p class=\"incomplete\"><strong>" << escape_html(head.incomplete) << "</strong></p>\n";
  }
  html << "<p class=\"note\">Results from";
  for (const auto& s : head.sources) html << " <code>" << escape_html(s) << "</code>";
  html << ". " << escape_html(head.counts);
  for (const auto& [v, text] : head.verdicts) {
    html << " <span class=\"" << verdict_class(v) << "\">" << escape_html(text) << "</span>;";
  }
  html << ' ' << escape_html(head.rules) << "</p>\n";
  const auto list = [&html](const char* title, const std::vector<std::string>& lines,
                            const char* classes) {
    if (*title != '\0') html << "<p class=\"note\">" << title << "</p>\n";
    html << "<ul class=\"" << classes << "\">\n";
    for (const auto& line : lines) html << "<li>" << escape_html(line) << "</li>\n";
    html << "</ul>\n";
  };
  list("Scale of the runs:", head.scale, "note");
  list("The tests:", head.legend, "note legend");
  html << "<p class=\"note\">" << escape_html(head.families) << "</p>\n";
  list("", head.floors, "note");
}

// Eval and train loss, their difference from the baseline and the weights' divergence.
void loss_charts(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  const auto& ranked = facts.ranked;
  const auto& floors = facts.floors;
  html << "<h2>Loss against the baseline</h2>\n<div class=\"charts\">\n";
  html << render_line_chart(curves(
      input, ranked, floors, "eval loss", "eval loss", false,
      [](const RunRecord& r) { return series_of(r.eval, &EvalRow::loss); }, true));
  html << render_line_chart(curves(
      input, ranked, floors, "train loss (moving average of 10 steps)", "train loss", false,
      [](const RunRecord& r) { return moving_average(series_of(r.train, &TrainRow::loss), 10); },
      true));
  html << render_line_chart(curves(
      input, ranked, floors, "|eval loss - baseline| / baseline (log scale)", "relative difference",
      true,
      [](const RunRecord& r) {
        auto p = series_of(r.eval, &EvalRow::rel_diff);
        for (auto& xy : p) xy.second = std::fabs(xy.second);
        return p;
      },
      false));
  html << render_line_chart(curves(
      input, ranked, floors, "weight divergence vs baseline (relative L2)",
      "||w - w_baseline|| / ||w_baseline||", true,
      [](const RunRecord& r) { return series_of(r.eval, &EvalRow::weight_rel_l2); }, false));
  html << "</div>\n";
}

void heatmap_section(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  const auto axes = heatmap_axes(input);
  html << "<h2>Final divergence over two recipe axes</h2>\n";
  if (axes.size() == 2) {
    html << "<div class=\"charts\">" << render_heatmap(divergence_heatmap(facts.ranked, axes))
         << "</div>\n";
  } else {
    html << "<p class=\"note\">The runs vary fewer than two independent recipe fields: no "
         << "heatmap.</p>\n";
  }
}

// amax and scale per layer of the best and the worst run that quantized anything (a run with
// every GEMM overridden has no FP8 operand to show).
void trajectories_section(std::ostringstream& html, const ReportFacts& facts) {
  html << "<h2>Scale and amax trajectories</h2>\n";
  std::vector<const RunRecord*> with_layers;
  for (const auto* r : facts.ranked) {
    if (!r->layers->empty()) {
      with_layers.push_back(r);
    }
  }
  std::vector<const RunRecord*> focus;
  if (!with_layers.empty()) focus.push_back(with_layers.front());
  if (with_layers.size() > 1) focus.push_back(with_layers.back());
  for (const auto* r : focus) {
    const auto label = run_label(*r) + " [" + run_verdict(*r, facts.floors.of(*r).tolerance) + "]";
    html << "<div class=\"charts\">\n"
         << render_line_chart(layer_chart(*r, &LayerRow::amax, "amax per layer: " + label, "amax"))
         << render_line_chart(layer_chart(*r, &LayerRow::scale_max, "scale per layer: " + label,
                                          "scale (q = cast(x * scale))"))
         << "</div>\n";
  }
}

void underflow_charts(std::ostringstream& html, const ReportInput& input,
                      const ReportFacts& facts) {
  const auto& ranked = facts.ranked;
  const auto& floors = facts.floors;
  html << "<h2>Underflow and saturation over time</h2>\n<div class=\"charts\">\n";
  html << render_line_chart(curves(
      input, ranked, floors, "underflowed fraction of grad_output elements (log scale)", "fraction",
      true,
      [](const RunRecord& r) {
        return fraction_per_step(r, &LayerRow::underflowed, "grad_output");
      },
      false));
  html << render_line_chart(curves(
      input, ranked, floors, "underflowed fraction, all quantized elements (log scale)", "fraction",
      true, [](const RunRecord& r) { return fraction_per_step(r, &LayerRow::underflowed); },
      false));
  html << render_line_chart(curves(
      input, ranked, floors, "saturated fraction, all quantized elements (log scale)", "fraction",
      true, [](const RunRecord& r) { return fraction_per_step(r, &LayerRow::saturated); }, false));
  html << "</div>\n";
}

// report.html's canvas (report_layout.hpp).
class HtmlCanvas final : public ReportCanvas {
 public:
  void head(const ReportHead& h) override { experiments::head(html, h); }
  void table(const ReportTable& t) override { table_html(html, t); }
  void resolution(const ReportFacts& facts) override { resolution_list(html, facts); }
  void literature(const ReportFacts& facts) override { literature_section(html, facts); }
  void ablation(const ReportInput& input) override { ablation_section(html, input); }
  void charts(const ReportInput& input, const ReportFacts& facts) override {
    loss_charts(html, input, facts);
    heatmap_section(html, input, facts);
    trajectories_section(html, facts);
    underflow_charts(html, input, facts);
  }
  void line_charts(const std::vector<LineChart>& charts) override {
    if (charts.empty()) return;
    html << "<div class=\"charts\">\n";
    for (const auto& chart : charts) html << render_line_chart(chart);
    html << "</div>\n";
  }
  void heatmap(const HeatmapChart& chart, const ReportTable& as_table) override {
    html << "<h2>" << escape_html(as_table.title) << "</h2>\n<p class=\"note\">"
         << escape_html(as_table.note) << "</p>\n<div class=\"charts\">" << render_heatmap(chart)
         << "</div>\n";
  }
  void layer_stats(const ReportInput& input) override { html << render_layer_stats_html(input); }
  void notes(const std::vector<std::string>& notes) override {
    html << "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : notes) html << "<li>" << escape_html(n) << "</li>\n";
    html << "</ul>\n";
  }
  std::ostringstream html;
};

}  // namespace

std::string render_html_report(const ReportInput& input) {
  return render_html_report(input, ReportFacts(input));
}

std::string render_html_report(const ReportInput& input, const ReportFacts& facts) {
  HtmlCanvas canvas;
  draw_report(input, facts, canvas);
  canvas.html << "<script>" << kCheckScript << "</script>\n</body>\n</html>\n";
  return canvas.html.str();
}

}  // namespace fp8lab::experiments
