// What the reports conclude and how honestly they say it, on hand-made records (no training): the
// noise floor of 3 baseline seeds and the fallback below 3, recipes aggregated over seeds (median,
// n), the heatmap's median with n, the as-asked / upstream marks (and "not recorded" for older
// records), links from each row to its record, the --heatmap-axes errors, readable axes and
// legends.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "experiments/render/html_report.hpp"
#include "experiments/render/markdown_report.hpp"
#include "experiments/render/summary_csv.hpp"
#include "experiments/render/svg_chart.hpp"
#include "experiments/render/write_reports.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/stats/analysis.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/recipe_rows.hpp"
#include "experiments/stats/report_data.hpp"
#include "experiments/stats/run_provenance.hpp"
#include "recipes/heatmap_axes.hpp"
#include "tests/experiments/report_test_support.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::add_seed_runs;
using testing::baseline_record;
using testing::change;
using testing::count_of;
using testing::fp8_record;
using testing::html_of;
using testing::markdown_of;
using testing::read_text;
using testing::report_input_of;
using testing::typed;

// Baselines on seeds 0, 1, 2 ending at 2.00, 2.02, 1.99: median 2.00, range 0.03, floor 1.5%.
std::vector<nlohmann::json> three_baselines() {
  return {baseline_record(0, 2.0), baseline_record(1, 2.02), baseline_record(2, 1.99)};
}

}  // namespace

TEST_CASE("Three baseline seeds measure the noise floor the verdicts compare with",
          "[report][noise]") {
  auto records = three_baselines();
  records.push_back(fp8_record("near", "HYBRID", 0, 2.02));  // +1.0%: within the 1.5% floor
  records.push_back(fp8_record("far", "E4M3", 0, 2.036));    // +1.8%: beyond it (but < 2%)
  const auto typed_records = typed(records);
  const NoiseFloors floors(typed_records);
  const auto& floor = floors.of(typed(records[3]));
  REQUIRE(floor.floor);
  CHECK(*floor.floor == Approx(0.015));
  CHECK(floor.tolerance == Approx(0.015));
  CHECK(floor.seeds == std::vector<std::int64_t>{0, 1, 2});
  CHECK(floor.describe() ==
        "noise floor 1.5% (range / median of the final eval loss over baseline seeds 0, 1, 2)");
  CHECK(run_verdict(typed(records[3]), floor.tolerance) == "within tolerance");
  CHECK(run_verdict(typed(records[4]), floor.tolerance) == "beyond tolerance");
  // The fixed 2% would have put the second one within: the floor, not 2%, decides.
  CHECK(run_verdict(typed(records[4])) == "within tolerance");
  const auto ranked = ranked_runs(typed_records, NoiseFloors(typed_records));
  REQUIRE(ranked.size() == 2);
  CHECK(ranked[0]->run_id == "near");

  const auto md = markdown_of(records);
  // The unpaired floor stays as context; one seed gives no paired interval.
  CHECK_THAT(md, Catch::Contains("- w (context, not the verdict rule): noise floor 1.5% (range / "
                                 "median"));
  CHECK_THAT(md, Catch::Contains("| 2 | E4M3 m0 | 0 | inconclusive (1 seed with a paired error; "
                                 "a test needs 3) |"));
  const auto csv = render_summary_csv(report_input_of(records));
  CHECK_THAT(csv, Catch::Contains(",beyond tolerance,"));
  CHECK_THAT(csv, Catch::Contains(",0.015,0.015,\"noise floor 1.5%"));
}

TEST_CASE("Fewer than 3 finished baseline seeds: the floor is unmeasured, the fixed 2% is used",
          "[report][noise]") {
  SECTION("one seed") {
    const std::vector<nlohmann::json> records = {baseline_record(0, 2.0),
                                                 fp8_record("a", "HYBRID", 0, 2.036)};
    const auto typed_records = typed(records);
    const NoiseFloors floors(typed_records);
    const auto& floor = floors.of(typed(records[1]));
    CHECK_FALSE(floor.floor);
    CHECK(floor.tolerance == kTracksBaselineTolerance);
    CHECK(floor.describe() == "noise floor unmeasured (1 finished baseline seed: 0; needs 3, e.g. "
                              "baseline_seeds: [0, 1, 2] in the sweep file): fixed 2% tolerance "
                              "used");
    CHECK(run_verdict(typed(records[1]), floor.tolerance) == "within tolerance");
  }
  SECTION("three seeds, one of which failed") {
    const std::vector<nlohmann::json> records = {baseline_record(0, 2.0), baseline_record(1, 2.02),
                                                 baseline_record(2, 0, "failed"),
                                                 fp8_record("a", "HYBRID", 0, 2.036)};
    const auto typed_records = typed(records);
    const NoiseFloors floors(typed_records);
    const auto& floor = floors.of(typed(records[3]));
    CHECK_FALSE(floor.floor);
    CHECK_THAT(floor.describe(), Catch::StartsWith("noise floor unmeasured (2 finished baseline "
                                                   "seeds: 0, 1; needs 3"));
  }
  SECTION("an FP8 run whose baseline is not among the records") {
    const std::vector<nlohmann::json> records = {fp8_record("a", "HYBRID", 0, 2.01)};
    const auto typed_records = typed(records);
    const NoiseFloors floors(typed_records);
    const auto& floor = floors.of(typed(records[0]));
    CHECK_FALSE(floor.floor);
    CHECK(floor.tolerance == kTracksBaselineTolerance);
    CHECK_THAT(floor.describe(), Catch::Contains("0 finished baseline seeds;"));
    CHECK_THAT(html_of(records),
               Catch::Contains("<li>no baseline record: fixed 2% tolerance used</li>"));
    CHECK_THAT(markdown_of(records),
               Catch::Contains("- no baseline record: fixed 2% tolerance used"));
  }
}

TEST_CASE("A recipe run on several seeds is one row: medians with n, a diverged seed shown",
          "[report][noise]") {
  auto records = three_baselines();
  // HYBRID m0 on seeds 0, 1, 2: +0.5%, +3%, +1% -> median 1%, within the 1.5% floor.
  add_seed_runs(records, "h", "HYBRID", 0, {2.01, 2.06, 2.02});
  // E5M2 m0: two seeds track, one diverged.
  add_seed_runs(records, "e", "E5M2", 0, {2.0, 2.0, 2.0}, {"finished", "diverged"});
  const auto typed_records = typed(records);
  const NoiseFloors floors(typed_records);
  const auto rows = ranked_recipe_rows(typed_records, floors);
  REQUIRE(rows.size() == 2);
  // +0.5%, +3%, +1%: a mean of 1.5% whose 95% interval straddles the 0.25% band.
  CHECK(rows[0].verdict == "inconclusive");
  CHECK(rows[0].runs.size() == 3);
  CHECK(rows[0].seeds_text() == "0, 1, 2 (n=3)");
  REQUIRE(rows[0].median_abs_rel_diff);
  CHECK(*rows[0].median_abs_rel_diff == Approx(0.01));
  CHECK(*rows[0].median_at(&FinalFigures::eval_loss) == Approx(2.02));
  CHECK(rows[1].verdict == "diverged");
  CHECK(rows[1].verdict_text() == "diverged (1 of 3 seeds diverged)");

  const auto md = markdown_of(records);
  CHECK_THAT(md,
             Catch::Contains("| 1 | HYBRID m0 | 0, 1, 2 (n=3) | inconclusive (80% power for its "
                             "settling test (t-test mean=+b) at a mean of +1.5% and this spread "
                             "needs "));
  CHECK_THAT(md, Catch::Contains("| 2 | E5M2 m0 | 0, 1, 2 (n=3) | diverged (1 of 3 seeds "
                                 "diverged) |"));
}

TEST_CASE("A seed that threw (no steps_planned) stays in its recipe's row; a failed baseline "
          "seed stays in its family",
          "[report][noise]") {
  auto records = three_baselines();
  records.push_back(baseline_record(3, 0, "failed"));
  add_seed_runs(records, "h", "HYBRID", 0, {2.01, 2.0, 2.02}, {"finished", "failed"});
  REQUIRE_FALSE(records[5].contains("steps_planned"));
  const auto typed_records = typed(records);
  const NoiseFloors floors(typed_records);
  CHECK(floors.all().size() == 1);
  CHECK(floors.of(typed(records[3])).seeds == std::vector<std::int64_t>{0, 1, 2});
  const auto rows = ranked_recipe_rows(typed_records, floors);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].runs.size() == 3);
  CHECK(rows[0].verdict_text() == "failed (1 of 3 seeds threw)");
  CHECK(baseline_family("baseline-w-seed12-bf16-steps40-cuda") == "baseline-w-bf16-steps40-cuda");
  CHECK(baseline_family("baseline-a-seed-x-seed3-fp32") == "baseline-a-seed-x-fp32");
}

TEST_CASE("The unpaired vs-baseline column shows the median |rel diff| of finished seeds",
          "[report][noise]") {
  auto records = three_baselines();
  // -2%, +0.5%, +1% and a failed seed: the signed median over all seeds would be 0.5% (or
  // include the failed one); the column shows the median |rel diff| of the finished ones, 1%.
  add_seed_runs(records, "h", "HYBRID", 0, {1.96, 2.01, 2.02, 2.3},
                {"finished", "finished", "finished", "failed"});
  const auto md = markdown_of(records);
  CHECK_THAT(md, Catch::Contains("| \\|vs baseline\\| (unpaired) |"));
  CHECK_THAT(md, Catch::Contains("| HYBRID m0 | 0, 1, 2, 3 (n=4) | failed (1 of 4 seeds threw) |"));
  CHECK_THAT(md, Catch::Contains(" | - | 2.015 | 1% |"));
  const auto html = html_of(records);
  CHECK_THAT(html, Catch::Contains("<th>|vs baseline| (unpaired)</th>"));
}

TEST_CASE("Heatmap cells are medians with n; a diverged run counts as the worst, not the mean",
          "[report][heatmap]") {
  std::vector<nlohmann::json> records = {baseline_record()};
  // Cell (HYBRID, 0): +1%, +1.2%, diverged -> median 1.2% (a mean would be NaN or Inf).
  records.push_back(fp8_record("a", "HYBRID", 0, 2.02, "finished", 0));
  records.push_back(fp8_record("b", "HYBRID", 0, 2.024, "finished", 1));
  records.push_back(fp8_record("c", "HYBRID", 0, 2.0, "diverged", 2));
  // Cell (E5M2, 4): one run that diverged -> broken.
  records.push_back(fp8_record("d", "E5M2", 4, 2.0, "diverged"));
  records.push_back(fp8_record("e", "E5M2", 0, 2.2));
  const auto html = html_of(records);
  CHECK_THAT(html, Catch::Contains(">1.2% n=3 1\u2717</text>"));
  CHECK_THAT(html, Catch::Contains(">broken n=1 1\u2717</text>"));
  CHECK_THAT(html, Catch::Contains("<title>fp8_format=HYBRID, margin=0: median 1.2% over n=3 "
                                   "runs (finished runs from 1% to 1.2%), of which 1 diverged or "
                                   "failed (counted as the worst)</title>"));
  CHECK_THAT(html, Catch::Contains("median over the other axes and seeds, with n"));
}

TEST_CASE("Every row says how it ran and what accelerate + TE would change or refuse",
          "[report][provenance]") {
  auto refused = fp8_record("pure-e5m2", "E5M2", 0, 2.01);
  testing::as_asked(refused, nlohmann::json::array(),
                    "Pure E5M2 training is not supported by Transformer Engine");
  auto changed = fp8_record("recent", "HYBRID", 0, 2.0);
  testing::as_asked(changed, {change("amax_compute_algo", "most_recent", "max",
                                     "TERecipeKwargs never forwards it")});
  auto same = fp8_record("same", "HYBRID", 4, 2.0);
  testing::as_asked(same, nlohmann::json::array());
  auto upstream = fp8_record("up", "HYBRID", 8, 2.0);
  upstream["runs_as"] = "upstream";
  upstream["changed_fields"] = {change("amax_compute_algo", "most_recent", "max", "TE")};
  upstream["upstream"] = {{"runner", "accelerate + TE"},
                          {"runnable", true},
                          {"would_change", nlohmann::json::array()},
                          {"refusal", nullptr}};
  const auto old = fp8_record("old", "E4M3", 0, 2.0);  // written before the fields existed

  CHECK(runs_as_text(typed(refused)) == "as asked");
  CHECK(upstream_mark(typed(refused)).differs);
  CHECK(upstream_mark(typed(refused)).text ==
        "accelerate + TE refuses: Pure E5M2 training is not supported by Transformer Engine");
  // A refusal as fp8lab writes it names the runner itself: not said twice.
  auto refused_by_name = refused;
  refused_by_name["upstream"]["refusal"] = "accelerate + TE refuses these settings (fp8_format)";
  CHECK(upstream_mark(typed(refused_by_name)).text ==
        "accelerate + TE refuses these settings (fp8_format)");
  CHECK(upstream_mark(typed(changed)).differs);
  CHECK(upstream_mark(typed(changed)).text ==
        "accelerate + TE would change: amax_compute_algo "
        "most_recent -> max (TERecipeKwargs never forwards it)");
  CHECK_FALSE(upstream_mark(typed(same)).differs);
  CHECK(upstream_mark(typed(same)).text == "accelerate + TE runs it the same");
  CHECK(runs_as_text(typed(upstream)) == "upstream (amax_compute_algo most_recent -> max)");
  CHECK_FALSE(upstream_mark(typed(upstream)).differs);
  CHECK(runs_as_text(typed(old)) == "not recorded");
  CHECK(upstream_mark(typed(old)).text == "not recorded");
  CHECK_FALSE(upstream_mark(typed(old)).differs);
  CHECK(runs_as_text(typed(baseline_record())) == "baseline");

  const ReportInput input =
      report_input_of({baseline_record(), refused, changed, same, upstream, old});
  const auto html = render_html_report(input);
  CHECK(count_of(html, "<tr class=\"upstream-differs\">") == 2);
  // A short mark in the cell, the full text on hover.
  CHECK_THAT(html, Catch::Contains("<td>as asked</td><td class=\"upstream\" title=\"accelerate + "
                                   "TE refuses: Pure E5M2 training is not supported by "
                                   "Transformer Engine\">\u26a0 TE refuses</td>"));
  CHECK_THAT(html, Catch::Contains("<td>not recorded</td><td class=\"upstream\" title=\"not "
                                   "recorded\">not recorded"));
  const auto md = render_markdown_report(input);
  // A short mark in the cell, the full text in a numbered footnote.
  CHECK_THAT(md, Catch::Contains("| as asked | **TE changes 1 field** ["));
  CHECK_THAT(md, Catch::Contains("] accelerate + TE would change: amax_compute_algo most_recent "
                                 "-> max (TERecipeKwargs never forwards it)\n"));
  CHECK_THAT(md, Catch::Contains("| upstream (amax_compute_algo most_recent -> max) | TE: same |"));
  const auto csv = render_summary_csv(input);
  CHECK_THAT(csv, Catch::Contains(",as asked,accelerate + TE refuses: Pure E5M2 training is not "
                                  "supported by Transformer Engine,true,runs/pure-e5m2.json,"));
  CHECK_THAT(csv, Catch::Contains(",not recorded,not recorded,false,runs/old.json,"));
}

TEST_CASE("Each row links to its run record, relative to where the reports are",
          "[report][links]") {
  const testing::Scratch dir("links");
  ResultsDirectory store(dir / "sweep");
  store.write_run_record(baseline_record());
  store.write_run_record(fp8_record("hybrid", "HYBRID", 0, 2.01));
  store.write_run_record(fp8_record("e5m2", "E5M2", 4, 2.2));
  SECTION("reports beside the records") {
    const auto paths = write_reports(ReportOptions{{dir / "sweep"}, {}, {}});
    const auto html = read_text(paths.report_html);
    CHECK_THAT(html, Catch::Contains("<a href=\"runs/hybrid.json\"><code>hybrid</code></a>"));
    CHECK_THAT(html, Catch::Contains("<a href=\"runs/baseline-w-seed0-fp32.json\">"));
    CHECK_THAT(read_text(paths.report_md), Catch::Contains("[`e5m2`](runs/e5m2.json)"));
    CHECK_THAT(read_text(paths.summary_csv), Catch::Contains(",runs/e5m2.json,"));
    CHECK(fs::exists(dir / "sweep" / "runs/e5m2.json"));
  }
  SECTION("reports written elsewhere (--out)") {
    const auto paths = write_reports(ReportOptions{{dir / "sweep"}, dir / "merged", {}});
    CHECK_THAT(read_text(paths.report_html),
               Catch::Contains("<a href=\"../sweep/runs/hybrid.json\">"));
    CHECK(fs::exists(dir / "merged" / "../sweep/runs/hybrid.json"));
  }
}

TEST_CASE("--heatmap-axes naming a field that is not a recipe field or not varied is an error",
          "[report][heatmap]") {
  const testing::Scratch dir("axes");
  ResultsDirectory store(dir);
  store.write_run_record(baseline_record());
  store.write_run_record(fp8_record("a", "HYBRID", 0, 2.01));
  store.write_run_record(fp8_record("b", "E5M2", 4, 2.2));
  auto report = [&](std::vector<std::string> axes) {
    return write_reports(ReportOptions{{dir}, {}, std::move(axes)});
  };
  CHECK_THROWS_WITH(report({"fp8_format", "bogus"}),
                    "--heatmap-axes 'fp8_format,bogus': 'bogus' is not a recipe field; accepted: "
                    "two different recipe fields these runs vary: fp8_format, margin");
  CHECK_THROWS_WITH(report({"interval", "margin"}),
                    "--heatmap-axes 'interval,margin': 'interval' is a recipe field these runs do "
                    "not vary (one value); accepted: two different recipe fields these runs vary: "
                    "fp8_format, margin");
  CHECK_THROWS_WITH(report({"margin", "margin"}),
                    Catch::StartsWith("--heatmap-axes 'margin,margin': names 'margin' twice;"));
  CHECK_NOTHROW(report({"margin", "fp8_format"}));
  CHECK_THROWS_WITH(recipes::check_heatmap_axes({"margin", "fp8_format"}, {"margin"}),
                    "--heatmap-axes 'margin,fp8_format': 'fp8_format' is a recipe field these "
                    "runs do not vary (one value); accepted: none, these runs vary only margin (a "
                    "heatmap needs two): drop --heatmap-axes");
}

TEST_CASE("Axes stay readable: few decade ticks on a log axis, cut outliers on a linear one",
          "[report][svg]") {
  SECTION("an MXFP8 scale of 2^127 beside 1e-3 on a log axis") {
    LineChart chart{"scale",
                    "step",
                    "scale",
                    true,
                    {{"mx", {{0, 1e-3}, {1, 1.0}, {2, std::ldexp(1.0, 127)}}, "#000", 1.0, false}}};
    const auto svg = render_line_chart(chart);
    // 41 decades: at most 8 tick labels, one per 6 decades.
    const auto ticks = count_of(svg, "class=\"tick\" text-anchor=\"end\"");
    CHECK(ticks >= 3);
    CHECK(ticks <= 8);
  }
  SECTION("a loss that blows up before diverging on a linear axis") {
    std::vector<std::pair<double, double>> points;
    for (int i = 0; i < 30; ++i) points.emplace_back(i, 2.0 + 0.01 * i);
    points.emplace_back(30, 1e30);
    LineChart chart{"loss", "step", "loss", false, {{"run", points, "#000", 1.0, false}}};
    const auto svg = render_line_chart(chart);
    CHECK_THAT(svg, Catch::Contains("axis cut: values up to 1e+30 drawn on this edge"));
    CHECK_THAT(svg, Catch::Contains("class=\"axis-break\""));
    // The bulk keeps its resolution: the ticks are those of 2.0 .. 2.3.
    CHECK_THAT(svg, Catch::Contains(">2.2</text>"));
  }
  SECTION("no cut without outliers") {
    LineChart chart{
        "loss",
        "step",
        "loss",
        false,
        {{"run",
          {{0, 4.0}, {1, 3.0}, {2, 2.5}, {3, 2.4}, {4, 2.3}, {5, 2.2}, {6, 2.1}, {7, 2.0}, {8, 1.9}},
          "#000",
          1.0,
          false}}};
    CHECK(render_line_chart(chart).find("axis cut") == std::string::npos);
  }
}

TEST_CASE("Legends group curves by verdict, name the top 3 of each and count the rest",
          "[report][svg]") {
  std::vector<nlohmann::json> records = {baseline_record()};
  for (int i = 0; i < 10; ++i) {
    records.push_back(
        fp8_record(std::string("t").append(std::to_string(i)), "HYBRID", i, 2.0 + 0.001 * i));
  }
  records.push_back(fp8_record("bad", "E5M2", 40, 3.9));
  const auto html = html_of(records);
  CHECK_THAT(html, Catch::Contains(">within tolerance (10)</text>"));
  CHECK_THAT(html, Catch::Contains(">+7 more within tolerance (hover a curve)</text>"));
  // The threshold's old words are in no group, hover or column (issue 42 item 4).
  CHECK_THAT(html, !Catch::Contains("tracks baseline") && !Catch::Contains("degraded"));
  CHECK_THAT(html, Catch::Contains(">failed to train (1)</text>"));
  // Every curve has its hover, naming the run, seed, verdict and difference.
  CHECK(count_of(html, "<path class=\"series\"") == count_of(html, "</title></path>"));
  CHECK_THAT(html, Catch::Contains("<title>HYBRID m9, seed 0: within tolerance, final eval-loss "
                                   "difference 0.45% (run t9)</title></path>"));
  // The ranked table comes before the first chart.
  CHECK(html.find("<h2>Recipes ranked") < html.find("<svg"));
  const auto md = markdown_of(records);
  CHECK(md.find("## Recipes ranked") < md.find("## Baselines"));
}

TEST_CASE("The default heatmap axes skip a field that splits the runs as the first one does",
          "[report][heatmap]") {
  // scaling and use_mxfp8_block_scaling say the same thing: a heatmap over both is a diagonal.
  ReportInput input;
  input.records = {typed(baseline_record())};
  int i = 0;
  for (const bool mx : {false, true}) {
    for (const char* format : {"HYBRID", "E5M2"}) {
      auto r = fp8_record(std::string("r").append(std::to_string(i++)), format, 0, 2.01);
      r["recipe"]["scaling"] = mx ? "mxfp8" : "delayed";
      r["recipe"]["use_mxfp8_block_scaling"] = mx ? "true" : "false";
      r["recipe_fields"] = {"scaling", "use_mxfp8_block_scaling", "fp8_format", "margin"};
      input.records.push_back(typed(r));
    }
  }
  CHECK(varied_recipe_axes(input.records) ==
        std::vector<std::string>{"scaling", "use_mxfp8_block_scaling", "fp8_format"});
  CHECK(heatmap_axes(input) == std::vector<std::string>{"scaling", "fp8_format"});
  input.heatmap_axes = {"use_mxfp8_block_scaling", "scaling"};  // asked for: kept
  CHECK(heatmap_axes(input) == input.heatmap_axes);
}

}  // namespace fp8lab::experiments
