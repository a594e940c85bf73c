#include "experiments/render/svg_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace fp8lab::experiments {
namespace {

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

std::string tick_label(double v) {
  char buffer[32];
  if (v != 0.0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)) {
    std::snprintf(buffer, sizeof buffer, "%.0e", v);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.4g", v);
  }
  return buffer;
}

// About `count` ticks at 1, 2 or 5 times a power of ten over [low, high].
std::vector<double> linear_ticks(double low, double high, int count) {
  std::vector<double> ticks;
  const double span = high - low;
  if (!(span > 0)) return {low};
  const double raw = span / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double v) {
    low = std::min(low, v);
    high = std::max(high, v);
  }
  bool empty() const { return !(low <= high); }
};

}  // namespace

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string series_color(std::size_t i) {
  // Tableau 10, then the same hues darker.
  static constexpr std::array<const char*, 20> colors = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
      "#ff9da7", "#9c755f", "#bab0ac", "#2c4f73", "#a85d14", "#9e2f31", "#3f7f7a",
      "#2f6b2a", "#a8892a", "#6f4466", "#c4646f", "#5f4330", "#77706c"};
  return colors[i % colors.size()];
}

namespace {

// One line of a line chart's legend: a group's heading, a series, or a group's "+N more".
struct LegendLine {
  std::string text;
  const ChartSeries* series = nullptr;  // null for headings and "+N more"
  bool heading = false;
};

std::vector<LegendLine> legend_lines(const std::vector<ChartSeries>& series) {
  std::vector<LegendLine> lines;
  std::size_t hidden = 0;
  auto close_group = [&](const std::string& group) {
    if (hidden > 0) {
      std::string text = "+";
      text.append(std::to_string(hidden)).append(" more ").append(group).append(" (hover a curve)");
      lines.push_back({text});
    }
    hidden = 0;
  };
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    if (i == 0 || s.group != series[i - 1].group) {
      if (i > 0) close_group(series[i - 1].group);
      if (!s.group.empty()) {
        std::size_t n = 0;
        for (std::size_t j = i; j < series.size() && series[j].group == s.group; ++j) ++n;
        lines.push_back({s.group + " (" + std::to_string(n) + ")", nullptr, true});
      }
    }
    if (s.in_legend) {
      lines.push_back({s.label.size() > 38 ? s.label.substr(0, 37) + "…" : s.label, &s});
    } else {
      ++hidden;
    }
  }
  if (!series.empty()) close_group(series.back().group);
  return lines;
}

// The y range a linear axis shows: [low, high] of the values, cut to the bulk when extremes lie
// more than 3 inter-percentile spans (5th to 95th) beyond it.
struct LinearCut {
  bool high_cut = false, low_cut = false;
  double high_value = 0, low_value = 0;  // the extremes beyond the cut
};

LinearCut cut_outliers(std::vector<double> ys, Range& yr) {
  LinearCut cut;
  if (ys.size() < 8) return cut;
  std::sort(ys.begin(), ys.end());
  const double p05 = ys[ys.size() / 20], p95 = ys[ys.size() - 1 - ys.size() / 20];
  const double span = std::max(p95 - p05, std::fabs(p95) * 1e-6);
  if (ys.back() > p95 + 3 * span) {
    cut.high_cut = true;
    cut.high_value = ys.back();
    yr.high = *(std::upper_bound(ys.begin(), ys.end(), p95 + 3 * span) - 1);
  }
  if (ys.front() < p05 - 3 * span) {
    cut.low_cut = true;
    cut.low_value = ys.front();
    yr.low = *std::lower_bound(ys.begin(), ys.end(), p05 - 3 * span);
  }
  return cut;
}

}  // namespace

namespace {

// Where a line chart draws: the plot area in pixels and the data ranges it maps onto it.
struct LinePlot {
  explicit LinePlot(const LineChart& c) : chart(c) {}
  const LineChart& chart;
  double width = 0, height = 0;
  double left = 64, right = 250, top = 28, bottom = 44;
  Range xr, yr;  // yr in axis units (log10 for a log axis)
  double plot_w() const { return width - left - right; }
  double plot_h() const { return height - top - bottom; }
  double y_of(double y) const { return chart.log_y ? std::log10(y) : y; }
  bool usable(double y) const { return std::isfinite(y) && (!chart.log_y || y > 0); }
  double px(double x) const { return left + (x - xr.low) / (xr.high - xr.low) * plot_w(); }
  // Values beyond a cut are drawn on the plot's edge.
  double py(double y) const {
    const double v = std::clamp(y_of(y), yr.low, yr.high);
    return top + (yr.high - v) / (yr.high - yr.low) * plot_h();
  }
};

// The ranges of every usable point; `ys` gets their y values (for the outlier cut).
void data_ranges(LinePlot& plot, std::vector<double>& ys) {
  for (const auto& s : plot.chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !plot.usable(y)) continue;
      plot.xr.add(x);
      plot.yr.add(plot.y_of(y));
      ys.push_back(y);
    }
  }
}

// Widens degenerate ranges and pads the y range by 4% on each side.
void pad_ranges(LinePlot& plot) {
  auto& xr = plot.xr;
  auto& yr = plot.yr;
  if (xr.high == xr.low) xr.high = xr.low + 1;
  if (yr.high == yr.low) {
    yr.low -= plot.chart.log_y ? 0.5 : std::max(1e-12, std::fabs(yr.low) * 0.05);
    yr.high += plot.chart.log_y ? 0.5 : std::max(1e-12, std::fabs(yr.high) * 0.05);
  }
  const double pad = (yr.high - yr.low) * 0.04;
  yr.low -= pad;
  yr.high += pad;
}

// Decades on a log axis (every k-th, at most ~7), or round values of a range under a decade;
// 1-2-5 steps on a linear one.
std::vector<double> y_ticks(const LinePlot& plot) {
  const auto& yr = plot.yr;
  if (!plot.chart.log_y) return linear_ticks(yr.low, yr.high, 5);
  std::vector<double> ticks;
  const double decades = std::floor(yr.high) - std::ceil(yr.low) + 1;
  const double every = std::max(1.0, std::ceil(decades / 7));
  for (double e = std::ceil(yr.low / every) * every; e <= yr.high; e += every) {
    ticks.push_back(std::pow(10.0, e));
  }
  if (ticks.size() >= 2) return ticks;
  // Less than a decade: round values of the range itself (0.2, 0.22, 0.24), not 10^-0.7.
  ticks.clear();
  for (double t : linear_ticks(std::pow(10.0, yr.low), std::pow(10.0, yr.high), 4)) {
    if (t > 0) ticks.push_back(t);
  }
  return ticks;
}

// A cut axis: a zigzag break on the cut edge and the value beyond it.
void mark_cut(std::ostringstream& svg, const LinePlot& plot, double y_edge, double value, bool up) {
  const double left = plot.left;
  svg << "<path class=\"axis-break\" d=\"M" << left - 6 << ' ' << number(y_edge - 3)
      << " l4 6 l4 -6 l4 6\" "
      << "fill=\"none\" stroke=\"#cf222e\" stroke-width=\"1.5\"/><line x1=\"" << left << "\" x2=\""
      << left + plot.plot_w() << "\" y1=\"" << number(y_edge) << "\" y2=\"" << number(y_edge)
      << "\" stroke=\"#cf222e\" stroke-dasharray=\"2 3\"/><text x=\"" << left + plot.plot_w() - 4
      << "\" y=\"" << number(y_edge + (up ? 11 : -4))
      << "\" class=\"tick\" text-anchor=\"end\" fill=\"#cf222e\">axis cut: values "
      << (up ? "up to " : "down to ") << tick_label(value) << " drawn on this edge</text>\n";
}

// Frame, grid, tick labels, the cut marks and the axis labels.
void line_axes(std::ostringstream& svg, const LinePlot& plot, const LinearCut& cut) {
  const double left = plot.left, top = plot.top, plot_w = plot.plot_w(), plot_h = plot.plot_h();
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" class=\"frame\"/>\n";
  for (double t : linear_ticks(plot.xr.low, plot.xr.high, 6)) {
    svg << "<line x1=\"" << number(plot.px(t)) << "\" x2=\"" << number(plot.px(t)) << "\" y1=\""
        << top << "\" y2=\"" << top + plot_h << "\" class=\"grid\"/><text x=\""
        << number(plot.px(t)) << "\" y=\"" << top + plot_h + 14
        << "\" class=\"tick\" text-anchor=\"middle\">" << tick_label(t) << "</text>\n";
  }
  for (double t : y_ticks(plot)) {
    svg << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << number(plot.py(t))
        << "\" y2=\"" << number(plot.py(t)) << "\" class=\"grid\"/><text x=\"" << left - 4
        << "\" y=\"" << number(plot.py(t) + 4) << "\" class=\"tick\" text-anchor=\"end\">"
        << tick_label(t) << "</text>\n";
  }
  if (cut.high_cut) mark_cut(svg, plot, top, cut.high_value, true);
  if (cut.low_cut) mark_cut(svg, plot, top + plot_h, cut.low_value, false);
  svg << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << plot.height - 8
      << "\" class=\"axis\" text-anchor=\"middle\">" << escape_html(plot.chart.x_label)
      << "</text>\n";
  svg << "<text x=\"14\" y=\"" << top + plot_h / 2 << "\" class=\"axis\" text-anchor=\"middle\" "
      << "transform=\"rotate(-90 14 " << top + plot_h / 2 << ")\">"
      << escape_html(plot.chart.y_label) << "</text>\n";
}

// Lines (a non-finite or unusable point starts a new segment), each with its hover.
void line_series(std::ostringstream& svg, const LinePlot& plot) {
  for (const auto& s : plot.chart.series) {
    std::string d;
    bool pen_down = false;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !plot.usable(y)) {
        pen_down = false;
        continue;
      }
      d += (pen_down ? " L" : " M") + number(plot.px(x)) + ' ' + number(plot.py(y));
      pen_down = true;
    }
    svg << "<path class=\"series\" d=\"" << d << "\" fill=\"none\" stroke=\"" << s.color
        << "\" stroke-width=\"" << s.stroke_width << '"'
        << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << "><title>"
        << escape_html(s.hover.empty() ? s.label : s.hover) << "</title></path>\n";
  }
}

// Markers: a dashed vertical line and its label, each with its hover.
void line_markers(std::ostringstream& svg, const LinePlot& plot) {
  for (const auto& m : plot.chart.markers) {
    if (!std::isfinite(m.x) || m.x < plot.xr.low || m.x > plot.xr.high) continue;
    const double x = plot.px(m.x);
    svg << "<g class=\"switch-marker\"><title>" << escape_html(m.hover.empty() ? m.label : m.hover)
        << "</title><line x1=\"" << number(x) << "\" x2=\"" << number(x) << "\" y1=\"" << plot.top
        << "\" y2=\"" << plot.top + plot.plot_h() << "\" stroke=\"" << m.color
        << "\" stroke-width=\"1\" stroke-dasharray=\"3 3\"/><text x=\"" << number(x + 3)
        << "\" y=\"" << plot.top + 10 << "\" class=\"marker\">" << escape_html(m.label)
        << "</text></g>\n";
  }
}

// The legend: group headings, the series shown by name, "+N more" per group.
void line_legend(std::ostringstream& svg, const LinePlot& plot,
                 const std::vector<LegendLine>& legend) {
  const double x0 = plot.width - plot.right;
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const auto& line = legend[i];
    const double ly = plot.top + 6 + static_cast<double>(i) * 14;
    if (line.series != nullptr) {
      const auto& s = *line.series;
      svg << "<line x1=\"" << x0 + 10 << "\" x2=\"" << x0 + 28 << "\" y1=\"" << ly << "\" y2=\""
          << ly << "\" stroke=\"" << s.color << "\" stroke-width=\""
          << std::max(2.0, s.stroke_width) << '"' << (s.dashed ? " stroke-dasharray=\"5 3\"" : "")
          << "/>";
    }
    svg << "<text x=\"" << x0 + (line.series != nullptr ? 32 : 10) << "\" y=\"" << ly + 4
        << "\" class=\"legend" << (line.heading ? " legend-group" : "") << "\">"
        << escape_html(line.text);
    if (line.series != nullptr) {
      svg << "<title>"
          << escape_html(line.series->hover.empty() ? line.series->label : line.series->hover)
          << "</title>";
    }
    svg << "</text>\n";
  }
}

}  // namespace

std::string render_line_chart(const LineChart& chart, int width, int height) {
  const auto legend = legend_lines(chart.series);
  LinePlot plot(chart);
  // Tall enough for the legend (14 px a line).
  plot.width = width;
  plot.height =
      std::max(height, static_cast<int>(plot.top + 14 * static_cast<double>(legend.size()) + 16));
  std::vector<double> ys;
  data_ranges(plot, ys);
  std::ostringstream svg;
  svg << "<svg class=\"chart\" data-kind=\"line\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << width << "\" height=\"" << plot.height << "\" viewBox=\"0 0 " << width << ' '
      << plot.height << "\" role=\"img\" aria-label=\"" << escape_html(chart.title) << "\">\n";
  svg << "<text x=\"" << plot.left << "\" y=\"16\" class=\"title\">" << escape_html(chart.title)
      << "</text>\n";
  if (plot.xr.empty() || plot.yr.empty()) {
    svg << "<text x=\"" << plot.left + 10 << "\" y=\"" << plot.top + plot.plot_h() / 2
        << "\" class=\"empty\">no data</text>\n</svg>\n";
    return svg.str();
  }
  const LinearCut cut = chart.log_y ? LinearCut{} : cut_outliers(ys, plot.yr);
  pad_ranges(plot);
  line_axes(svg, plot, cut);
  line_series(svg, plot);
  line_markers(svg, plot);
  line_legend(svg, plot, legend);
  svg << "</svg>\n";
  return svg.str();
}

namespace {

// Colour: white (best, the lowest value) to red (worst), on a log scale when values span more
// than a decade, so that 0.1% and 1% differ visibly.
struct HeatmapColors {
  Range range;
  bool log_scale = false;
  explicit HeatmapColors(const HeatmapChart& chart) {
    for (const auto& row : chart.values) {
      for (const auto& v : row) {
        if (v && std::isfinite(*v)) range.add(*v);
      }
    }
    log_scale = !range.empty() && range.low > 0 && range.high / range.low > 10;
  }
  double fraction(double v) const {
    if (range.empty() || range.high == range.low) return 0.0;
    if (log_scale) {
      return (std::log(v) - std::log(range.low)) / (std::log(range.high) - std::log(range.low));
    }
    return (v - range.low) / (range.high - range.low);
  }
  static std::string color(double f) {
    const int g = static_cast<int>(std::lround(245 - 180 * f));
    const int b = static_cast<int>(std::lround(240 - 200 * f));
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", 250, g, b);
    return std::string(buffer);
  }
};

struct HeatmapGeometry {
  int left = 150, top = 48, legend = 72;
  int cell_width = 0, cell_height = 0;
};

// One row label and its cells, each with its value text and hover.
void heatmap_row(std::ostringstream& svg, const HeatmapChart& chart, const HeatmapGeometry& g,
                 const HeatmapColors& colors, std::size_t r) {
  const int y = g.top + static_cast<int>(r) * g.cell_height;
  svg << "<text x=\"" << g.left - 6 << "\" y=\"" << y + g.cell_height / 2 + 4
      << "\" class=\"tick\" text-anchor=\"end\">" << escape_html(chart.y_values[r]) << "</text>\n";
  for (std::size_t c = 0; c < chart.x_values.size(); ++c) {
    const int x = g.left + static_cast<int>(c) * g.cell_width;
    const auto& v = chart.values[r][c];
    const std::string fill = !v                   ? "#eeeeee"
                             : !std::isfinite(*v) ? "#7f0000"
                                                  : colors.color(colors.fraction(*v));
    const std::string text = chart.texts[r][c];
    const bool hovered = r < chart.hovers.size() && c < chart.hovers[r].size() &&
                         !chart.hovers[r][c].empty();
    svg << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << g.cell_width - 2
        << "\" height=\"" << g.cell_height - 2 << "\" fill=\"" << fill << "\"><title>"
        << escape_html(hovered ? chart.hovers[r][c]
                               : chart.y_values[r] + " / " + chart.x_values[c] + ": " + text)
        << "</title></rect>\n";
    svg << "<text x=\"" << x + g.cell_width / 2 - 1 << "\" y=\"" << y + g.cell_height / 2 + 3
        << "\" class=\"celltext\" text-anchor=\"middle\""
        << (v && !std::isfinite(*v) ? " fill=\"#ffffff\"" : "") << ">" << escape_html(text)
        << "</text>\n";
  }
}

// The colour scale under the cells and what grey and dark red mean.
void heatmap_legend(std::ostringstream& svg, const HeatmapChart& chart, const HeatmapGeometry& g,
                    const HeatmapColors& colors, const std::string& no_run) {
  const int ly = g.top + static_cast<int>(chart.y_values.size()) * g.cell_height + 16;
  for (int i = 0; i <= 10; ++i) {
    svg << "<rect x=\"" << g.left + i * 16 << "\" y=\"" << ly << "\" width=\"16\" height=\"10\" "
        << "fill=\"" << colors.color(i / 10.0) << "\"/>";
  }
  svg << "\n<text x=\"" << g.left << "\" y=\"" << ly + 24 << "\" class=\"tick\">"
      << escape_html(chart.value_label)
      << (colors.range.empty() ? std::string()
                               : ": " + chart.format_value(colors.range.low) + " (white) to " +
                                     chart.format_value(colors.range.high) + " (red)" +
                                     (colors.log_scale ? ", log scale" : ""))
      << "</text>\n<text x=\"" << g.left << "\" y=\"" << ly + 38 << "\" class=\"tick\">"
      << escape_html(no_run) << "</text>\n";
}

}  // namespace

std::string render_heatmap(const HeatmapChart& chart, int cell_width, int cell_height) {
  HeatmapGeometry g;
  g.cell_height = cell_height;
  // Columns wide enough for their labels (about 6 px per character at 10 px).
  g.cell_width = cell_width;
  for (const auto& x : chart.x_values) {
    g.cell_width = std::max(g.cell_width, static_cast<int>(6 * x.size()) + 12);
  }
  const int columns = static_cast<int>(chart.x_values.size());
  const int rows = static_cast<int>(chart.y_values.size());
  // Wide enough for the title (about 7.3 px per character at 13 px bold) and the two legend lines
  // (about 5.6 px per character at 10 px).
  const std::string no_run = "grey: no run; " + chart.broken_label;
  const int text_width = std::max(
      static_cast<int>(7.3 * static_cast<double>(chart.title.size())) + 16,
      g.left + static_cast<int>(5.6 * static_cast<double>(
                                          std::max(chart.value_label.size() + 60, no_run.size()))));
  const int width = std::max(g.left + columns * g.cell_width + 20, text_width);
  const int height = g.top + rows * g.cell_height + g.legend;
  const HeatmapColors colors(chart);

  std::ostringstream svg;
  svg << "<svg class=\"chart\" data-kind=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
      << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' ' << height
      << "\" role=\"img\" aria-label=\"" << escape_html(chart.title) << "\">\n";
  svg << "<text x=\"8\" y=\"16\" class=\"title\">" << escape_html(chart.title) << "</text>\n";
  svg << "<text x=\"" << g.left + columns * g.cell_width / 2 << "\" y=\"34\" class=\"axis\" "
      << "text-anchor=\"middle\">" << escape_html(chart.x_label) << "</text>\n";
  svg << "<text x=\"8\" y=\"34\" class=\"axis\">" << escape_html(chart.y_label)
      << " \u2193</text>\n";
  for (int c = 0; c < columns; ++c) {
    svg << "<text x=\"" << g.left + c * g.cell_width + g.cell_width / 2 << "\" y=\"" << g.top - 4
        << "\" class=\"tick\" text-anchor=\"middle\">"
        << escape_html(chart.x_values[static_cast<std::size_t>(c)]) << "</text>\n";
  }
  for (std::size_t r = 0; r < chart.y_values.size(); ++r) heatmap_row(svg, chart, g, colors, r);
  heatmap_legend(svg, chart, g, colors, no_run);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace fp8lab::experiments
