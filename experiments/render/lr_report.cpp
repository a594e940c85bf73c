#include "experiments/render/lr_report.hpp"

#include <algorithm>
#include <cmath>

#include "experiments/render/csv_table.hpp"
#include "experiments/stats/named_tests.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

ReportCell cell(std::string text, bool numeric = true) {
  ReportCell c;
  c.text = std::move(text);
  c.numeric = numeric;
  return c;
}

// "4.71 [4.69, 4.73]" (%.3g each), "-" without an interval.
std::string value_interval(const std::optional<MeanInterval>& m, const char* format = "%.3g") {
  if (!m) return "-";
  return format_number(m->mean, format) + " [" + format_number(m->low(), format) + ", " +
         format_number(m->high(), format) + "]";
}

// The edge as a learning rate: 10^mean [10^low, 10^high].
std::string edge_text(const LrArm& arm) {
  if (!arm.edge) return "-";
  const auto& e = *arm.edge;
  std::string text = lr_text(std::pow(10.0, e.mean)) + " [" + lr_text(std::pow(10.0, e.low())) +
                     ", " + lr_text(std::pow(10.0, e.high())) + "]";
  if (arm.censored > 0) {
    text += " (" + std::to_string(arm.censored) + " of " + std::to_string(arm.edges.size()) +
            " seeds beyond the grid)";
  }
  return text;
}

std::string loss_cell_text(const LrCell& c) {
  std::string text = c.loss ? format_number(c.loss->mean, "%.3f") + " \u00b1 " +
                                  format_number(c.loss->half_width, "%.2g")
                            : (c.losses.empty() ? "-" : format_number(c.losses.front(), "%.3f"));
  if (c.unstable.unstable > 0) {
    text += " (" + std::to_string(c.unstable.unstable) + "/" + std::to_string(c.unstable.runs) +
            " unstable)";
  }
  return text;
}

// The mean of the values (one seed too: no interval then); nullopt for none.
std::optional<double> mean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (const double x : values) sum += x;
  return sum / static_cast<double>(values.size());
}

std::string signed_decades(const std::optional<MeanInterval>& m) {
  if (!m) return "-";
  return format_number(m->mean, "%+.2f") + " [" + format_number(m->low(), "%+.2f") + ", " +
         format_number(m->high(), "%+.2f") + "] (n=" + std::to_string(m->n) + ")";
}

}  // namespace

ReportTable lr_loss_table(const ReportFacts& facts) {
  ReportTable table;
  table.title = "Learning-rate sensitivity: final eval loss against learning rate";
  if (facts.lr.empty()) return table;
  table.note =
      "Per arm and learning rate: the final eval loss capped at the run's initial eval loss "
      "(Wortsman et al. 2023's min(loss, initial loss); a run that met the instability rule counts "
      "as its initial loss), mean over seeds \u00b1 the 95% t half-width, and the unstable count "
      "where any. Hover a cell for the exact (Clopper-Pearson) interval of the count.";
  std::size_t widest = 0;
  for (const auto& g : facts.lr) widest = std::max(widest, g.lrs.size());
  table.columns = {"workload", "arm"};
  for (std::size_t i = 0; i < widest; ++i) table.columns.push_back("lr #" + std::to_string(i + 1));
  for (const auto& g : facts.lr) {
    std::vector<ReportCell> head{cell(g.workload, false), cell("learning rate", false)};
    for (const double lr : g.lrs) head.push_back(cell(lr_text(lr)));
    table.rows.push_back(std::move(head));
    for (const auto& arm : g.arms) {
      std::vector<ReportCell> row{cell(g.workload, false), cell(arm.label, false)};
      for (const auto& c : arm.cells) {
        ReportCell x = cell(loss_cell_text(c));
        x.detail = "lr " + lr_text(c.lr) + ": loss " + value_interval(c.loss, "%.4g") +
                   ", unstable " + c.unstable.text();
        row.push_back(std::move(x));
      }
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

ReportTable lr_edge_table(const ReportFacts& facts) {
  ReportTable table;
  table.title = "Learning-rate sensitivity: stability edge and LR sensitivity";
  if (facts.lr.empty()) return table;
  const auto& g0 = facts.lr.front();
  table.note =
      "Stability edge: per seed, the geometric midpoint between the largest learning rate below "
      "the first whose run met the instability rule and that one (half a grid step beyond the "
      "grid when none or the lowest did: censored), mean over seeds [95% CI]. Edge shift: per "
      "seed the baseline's edge minus the recipe's in decades (positive: FP8 lowers the edge), "
      "with the named test at alpha " +
      format_number(g0.alpha, "%.3g") + " and band b = one grid step (" +
      format_number(g0.step_decades, "%.3g") +
      " decades): `worse` means the recipe's edge is lower; p Holm over the report's exploratory "
      "family. Every seed's shift the same (sd 0): the exact sign test, p = 0.5^n. LR sensitivity "
      "(Wortsman et al. "
      "2023): per seed the mean over the grid of the capped loss minus its smallest value, in "
      "nats; lower is less sensitive; vs baseline: recipe minus baseline on the same seeds.";
  table.columns = {"workload",
                   "arm",
                   "stability edge (lr) [95% CI]",
                   "edge shift, decades [95% CI]",
                   "verdict",
                   "test",
                   "p raw",
                   "p Holm",
                   "LR sensitivity [95% CI]",
                   "vs baseline [95% CI]"};
  for (const auto& g : facts.lr) {
    for (const auto& arm : g.arms) {
      std::vector<ReportCell> row{cell(g.workload, false), cell(arm.label, false),
                                  cell(edge_text(arm))};
      row.push_back(cell(signed_decades(arm.edge_shift)));
      ReportCell verdict = cell(
          verdict_with_reasons(arm.edge_test ? arm.edge_test->verdict
                                             : (arm.label == "baseline" ? "-" : "inconclusive"),
                               arm.edge_exact, arm.edge_test),
          false);
      if (arm.edge_test) verdict.verdict = arm.edge_test->verdict;
      row.push_back(std::move(verdict));
      // The test and the interval it used, in decades (test_cells would print percentages).
      const NamedTest* t = arm.edge_test ? &*arm.edge_test : nullptr;
      row.push_back(cell(t ? t->test + ", " + format_number(t->ci_level * 100, "%.0f") + "% CI [" +
                                 format_number(t->ci_low, "%+.2f") + ", " +
                                 format_number(t->ci_high, "%+.2f") + "]"
                           : "-",
                         false));
      row.push_back(cell(t ? format_number(t->p_raw, "%.2g") : "-"));
      row.push_back(cell(test_cells(arm.edge_test).p_holm));
      row.push_back(cell(value_interval(arm.sensitivity)));
      row.push_back(cell(arm.sensitivity_shift
                             ? format_number(arm.sensitivity_shift->mean, "%+.3g") + " [" +
                                   format_number(arm.sensitivity_shift->low(), "%+.3g") + ", " +
                                   format_number(arm.sensitivity_shift->high(), "%+.3g") + "]"
                             : "-"));
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

std::vector<LineChart> lr_charts(const ReportFacts& facts) {
  std::vector<LineChart> charts;
  for (const auto& g : facts.lr) {
    LineChart chart;
    chart.title = "final eval loss (capped at the initial loss) against learning rate: " +
                  g.workload;
    chart.x_label = "log10 learning rate";
    chart.y_label = "eval loss, mean over seeds";
    for (std::size_t i = 0; i < g.arms.size(); ++i) {
      const auto& arm = g.arms[i];
      ChartSeries series;
      series.label = arm.label;
      series.color = arm.label == "baseline" ? "#000000" : series_color(i);
      series.stroke_width = arm.label == "baseline" ? 2.5 : 1.5;
      for (const auto& c : arm.cells) {
        if (const auto mean = mean_of(c.losses))
          series.points.emplace_back(std::log10(c.lr), *mean);
      }
      chart.series.push_back(std::move(series));
    }
    charts.push_back(std::move(chart));
  }
  return charts;
}

std::string render_lr_sensitivity_csv(const ReportFacts& facts) {
  // The low (1) or high (2) end of an interval, or its mean (0).
  const auto end = [](const std::optional<MeanInterval>& m, int which) -> std::optional<double> {
    if (!m) return std::nullopt;
    return which == 0 ? m->mean : which == 1 ? m->low() : m->high();
  };
  const auto lr_of = [](std::optional<double> log10_lr) -> std::optional<double> {
    if (!log10_lr) return std::nullopt;
    return std::pow(10.0, *log10_lr);
  };
  CsvTable csv;
  for (const auto& g : facts.lr) {
    for (const auto& arm : g.arms) {
      const NamedTest* t = arm.edge_test ? &*arm.edge_test : nullptr;
      const auto test_figure = [t](double NamedTest::*figure) {
        return t ? std::optional(t->*figure) : std::nullopt;
      };
      for (const auto& c : arm.cells) {
        const bool counted = c.unstable.runs > 0;
        const auto unstable_end = [&](double Proportion::*bound) {
          return counted ? std::optional(c.unstable.interval.*bound) : std::nullopt;
        };
        csv.field("workload", g.workload)
            .field("arm", arm.label)
            .number("lr", c.lr)
            .count("seeds", c.seeds.size())
            .number("loss_mean", mean_of(c.losses))
            .number("loss_ci_low", end(c.loss, 1))
            .number("loss_ci_high", end(c.loss, 2))
            .count("unstable_runs", c.unstable.unstable)
            .count("runs", c.unstable.runs)
            .number("unstable_ci_low", unstable_end(&Proportion::low))
            .number("unstable_ci_high", unstable_end(&Proportion::high))
            .number("edge_lr", lr_of(end(arm.edge, 0)))
            .number("edge_lr_ci_low", lr_of(end(arm.edge, 1)))
            .number("edge_lr_ci_high", lr_of(end(arm.edge, 2)))
            .count("edge_seeds", arm.edges.size())
            .count("edge_censored", arm.censored)
            .number("edge_shift_decades", end(arm.edge_shift, 0))
            .number("edge_shift_ci_low", test_figure(&NamedTest::ci_low))
            .number("edge_shift_ci_high", test_figure(&NamedTest::ci_high))
            .number("edge_ci_level", test_figure(&NamedTest::ci_level))
            .field("edge_test", t ? t->test : "")
            .number("edge_p_raw", test_figure(&NamedTest::p_raw))
            .number("edge_p_holm", test_figure(&NamedTest::p_holm))
            .field("edge_verdict", t ? t->verdict : "")
            .number("band_decades", g.step_decades)
            .number("alpha", g.alpha)
            .number("lr_sensitivity", end(arm.sensitivity, 0))
            .number("lr_sensitivity_ci_low", end(arm.sensitivity, 1))
            .number("lr_sensitivity_ci_high", end(arm.sensitivity, 2))
            .number("lr_sensitivity_vs_baseline", end(arm.sensitivity_shift, 0))
            .number("lr_sensitivity_vs_baseline_ci_low", end(arm.sensitivity_shift, 1))
            .number("lr_sensitivity_vs_baseline_ci_high", end(arm.sensitivity_shift, 2))
            .end_row();
      }
    }
  }
  return csv.text();
}

}  // namespace fp8lab::experiments
