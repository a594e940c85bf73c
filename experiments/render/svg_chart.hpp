// Inline SVG charts for report.html, drawn in C++ (no JavaScript library, no CDN: the report opens
// offline). Every chart is an <svg class="chart" data-kind="..."> element; the report's small
// self-check script counts them and their marks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fp8lab::experiments {

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite y break the line
  std::string color;                              // CSS colour
  double stroke_width = 1.5;
  bool dashed = false;
  // Legend: series of one group are listed under its name (consecutive series, in order); those
  // with in_legend false are counted as "+N more". Every curve has its hover (<title>): `hover`,
  // else the label.
  std::string group{};
  bool in_legend = true;
  std::string hover{};
};

// Axes stay readable whatever the values: a log axis puts at most ~7 decade ticks (an MXFP8 scale
// of 2^127 beside 1e-3 spans 41 decades), and a linear axis whose extreme values lie far outside
// the bulk (a loss blowing up before it diverges) is cut at the bulk, the points beyond drawn on
// the edge and the cut marked with the largest (smallest) value.
// A vertical line at x across the plot, with its label (drawn at the top) and hover: a precision
// schedule's switch step on the loss charts (recipes/schedule.hpp).
struct ChartMarker {
  double x = 0;
  std::string label;
  std::string hover;
  std::string color = "#555555";
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_y = false;  // points with y <= 0 are left out on a log axis
  std::vector<ChartSeries> series;
  std::vector<ChartMarker> markers{};  // drawn where x is inside the data's x range
};

struct HeatmapChart {
  std::string title;
  std::string x_label;  // the axis whose values are columns
  std::string y_label;  // rows
  std::vector<std::string> x_values;
  std::vector<std::string> y_values;
  // cells[row][column]: the value drawn as colour (empty: no run), and the text printed in it.
  std::vector<std::vector<std::optional<double>>> values;
  std::vector<std::vector<std::string>> texts;
  std::string value_label;  // what the colour means, for the legend
  std::string broken_label = "dark red: diverged or failed";  // what a non-finite value means
  // Hover (<title>) of each cell, [row][column]; empty: "row / column: text".
  std::vector<std::vector<std::string>> hovers{};
  // How the legend writes the lowest and highest value (as the cells do).
  std::function<std::string(double)> format_value = [](double v) { return std::to_string(v); };
};

std::string render_line_chart(const LineChart& chart, int width = 660, int height = 320);
std::string render_heatmap(const HeatmapChart& chart, int cell_width = 90, int cell_height = 30);

// A colour for series i of n, distinguishable and stable.
std::string series_color(std::size_t i);

// Text escaped for HTML and SVG content and attribute values.
std::string escape_html(const std::string& text);

}  // namespace fp8lab::experiments
