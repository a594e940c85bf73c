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
#include "experiments/render/report_charts.hpp"
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
void loss_section(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  html << "<h2>Loss against the baseline</h2>\n<div class=\"charts\">\n";
  for (const auto& chart : loss_charts(input, facts)) html << render_line_chart(chart);
  html << "</div>\n";
}

void heatmap_section(std::ostringstream& html, const ReportInput& input, const ReportFacts& facts) {
  html << "<h2>Final divergence over two recipe axes</h2>\n";
  if (const auto chart = divergence_heatmap(input, facts)) {
    html << "<div class=\"charts\">" << render_heatmap(*chart) << "</div>\n";
  } else {
    html << "<p class=\"note\">The runs vary fewer than two independent recipe fields: no "
         << "heatmap.</p>\n";
  }
}

// amax and scale per layer of the best and the worst run that quantized anything.
void trajectories_section(std::ostringstream& html, const ReportFacts& facts) {
  html << "<h2>Scale and amax trajectories</h2>\n";
  for (const auto& pair : trajectory_charts(facts)) {
    html << "<div class=\"charts\">\n";
    for (const auto& chart : pair) html << render_line_chart(chart);
    html << "</div>\n";
  }
}

void underflow_section(std::ostringstream& html, const ReportInput& input,
                       const ReportFacts& facts) {
  html << "<h2>Underflow and saturation over time</h2>\n<div class=\"charts\">\n";
  for (const auto& chart : underflow_charts(input, facts)) html << render_line_chart(chart);
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
    loss_section(html, input, facts);
    heatmap_section(html, input, facts);
    trajectories_section(html, facts);
    underflow_section(html, input, facts);
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
