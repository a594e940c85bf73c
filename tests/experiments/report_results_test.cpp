// The results store and the report writers, on hand-made records (no training): atomic writes,
// corrupt and truncated files reported with path and line, shard merging, summary.csv rows per
// requested combination, verdicts, and the charts of report.html.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "experiments/render/html_report.hpp"
#include "experiments/render/summary_csv.hpp"
#include "experiments/render/svg_chart.hpp"
#include "experiments/render/write_reports.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/stats/analysis.hpp"
#include "experiments/stats/noise_floor.hpp"
#include "experiments/stats/report_data.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::baseline_id;
using testing::baseline_record;
using testing::fp8_record;
using testing::read_text;
using testing::typed;
using testing::write_text;

}  // namespace

TEST_CASE("write_file_atomically leaves the whole text and no temp file", "[report][store]") {
  const testing::Scratch dir("atomic");
  write_file_atomically(dir / "sub" / "a.json", "first\n");
  write_file_atomically(dir / "sub" / "a.json", "second\n");
  CHECK(read_text(dir / "sub" / "a.json") == "second\n");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir / "sub")) {
    ++files;
    INFO(e.path());
  }
  CHECK(files == 1);
}

TEST_CASE("Run ids must be file names", "[report][store]") {
  CHECK_NOTHROW(check_run_id("baseline-gpt-tiny-seed0-fp32"));
  CHECK_THROWS_WITH(check_run_id("../x"), Catch::Contains("not a file name"));
  CHECK_THROWS(check_run_id(""));
  CHECK_THROWS(check_run_id(".hidden"));
}

TEST_CASE("A corrupt results file is reported with its path and line", "[report][reader]") {
  const testing::Scratch dir("corrupt");
  const auto good = baseline_record().dump();
  SECTION("garbage on line 3 of results.jsonl") {
    write_text(dir / "results.jsonl",
               good + "\n" + fp8_record("a", "HYBRID", 0, 2.0).dump() + "\n{\"run_id\": oops}\n");
    try {
      load_results({dir});
      FAIL("no error for a corrupt line");
    } catch (const ResultsFileError& e) {
      CHECK(e.path() == dir / "results.jsonl");
      CHECK(e.line() == 3);
      CHECK_THAT(e.what(), Catch::Contains((dir / "results.jsonl").string() + ":3:"));
    }
  }
  SECTION("a truncated last record (no final newline)") {
    const auto record = fp8_record("a", "HYBRID", 0, 2.0).dump();
    write_text(dir / "results.jsonl", good + "\n" + record.substr(0, record.size() / 2));
    try {
      load_results({dir});
      FAIL("no error for a truncated line");
    } catch (const ResultsFileError& e) {
      CHECK(e.line() == 2);
      CHECK_THAT(e.what(), Catch::Contains("truncated"));
    }
  }
  SECTION("a run file without a required field") {
    auto record = fp8_record("a", "HYBRID", 0, 2.0);
    record.erase("status");
    write_text(dir / "runs" / "a.json", record.dump() + "\n");
    CHECK_THROWS_WITH(load_results({dir}),
                      Catch::Contains((dir / "runs" / "a.json").string() + ":1:") &&
                          Catch::Contains("'status'"));
  }
  SECTION("a schema version from the future") {
    auto record = fp8_record("a", "HYBRID", 0, 2.0);
    record["schema_version"] = kResultsSchemaVersion + 1;
    write_text(dir / "runs" / "a.json", record.dump() + "\n");
    CHECK_THROWS_WITH(load_results({dir}), Catch::Contains("schema_version"));
  }
  SECTION("a directory without results") {
    CHECK_THROWS_WITH(load_results({dir}), Catch::Contains("holds no results"));
  }
}

TEST_CASE("Shards merge into one record per run, baselines first", "[report][reader]") {
  const testing::Scratch a("shard0"), b("shard1");
  ResultsDirectory(a).write_run_record(baseline_record());
  ResultsDirectory(a).write_run_record(fp8_record("r1", "HYBRID", 0, 2.0));
  ResultsDirectory(b).write_run_record(baseline_record());  // each shard ran the baseline
  ResultsDirectory(b).write_run_record(fp8_record("r2", "E5M2", 0, 2.3));
  const auto loaded = load_results({a, b});
  REQUIRE(loaded.records.size() == 3);
  CHECK(loaded.records[0].kind == "baseline");
  CHECK(loaded.notes.empty());
}

TEST_CASE("Unpaired labels: within / beyond tolerance, failed to train, diverged, error",
          "[report][analysis]") {
  CHECK(run_verdict(typed(fp8_record("a", "HYBRID", 0, 2.03))) == "within tolerance");  // +1.5%
  CHECK(run_verdict(typed(fp8_record("a", "HYBRID", 0, 2.05))) == "beyond tolerance");  // +2.5%
  CHECK(run_verdict(typed(fp8_record("a", "HYBRID", 0, 3.2))) ==
        "failed to train");  // fell 0.8 of 2
  CHECK(run_verdict(typed(fp8_record("a", "HYBRID", 0, 2.0, "diverged"))) == "diverged");
  CHECK(run_verdict(typed(fp8_record("a", "HYBRID", 0, 2.0, "failed"))) == "error");
  CHECK(run_verdict(typed(baseline_record())) == "baseline");

  const std::vector<nlohmann::json> records = {
      baseline_record(), fp8_record("worst", "E5M2", 4, 3.5), fp8_record("best", "HYBRID", 0, 2.01),
      fp8_record("mid", "E4M3", 1, 2.2)};
  const auto typed_records = typed(records);
  const auto ranked = ranked_runs(typed_records, NoiseFloors(typed_records));
  REQUIRE(ranked.size() == 3);
  CHECK(ranked[0]->run_id == "best");
  CHECK(ranked[1]->run_id == "mid");
  CHECK(ranked[2]->run_id == "worst");
  CHECK(varied_recipe_axes(typed_records) == std::vector<std::string>{"fp8_format", "margin"});
}

TEST_CASE("summary.csv has one row per requested combination", "[report][csv]") {
  ReportInput input;
  input.records =
      typed(std::vector<nlohmann::json>{baseline_record(), fp8_record("r1", "HYBRID", 0, 2.0)});
  // Two requests share run r1 (canonicalization), a third was never run.
  input.requested = {{{"index", 1}, {"label", "margin=0"}, {"run_id", "r1"}, {"note", ""}},
                     {{"index", 2},
                      {"label", "margin=0, dup"},
                      {"run_id", "r1"},
                      {"note", "same recipe as request #1"}},
                     {{"index", 3}, {"label", "margin=9"}, {"run_id", "r9"}, {"note", ""}}};
  const auto csv = render_summary_csv(input);
  std::istringstream lines(csv);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].rfind("request_index,request_label,run_id,", 0) == 0);
  CHECK(rows[1].rfind("1,margin=0,r1,w,0,finished,within tolerance,", 0) == 0);
  CHECK(rows[2].rfind("2,\"margin=0, dup\",r1,", 0) == 0);
  CHECK_THAT(rows[2], Catch::Contains("same recipe as request #1"));
  CHECK(rows[3].rfind("3,margin=9,r9,,,missing,not run,", 0) == 0);
}

TEST_CASE("Charts are inline SVG with one mark per series or cell", "[report][svg]") {
  LineChart chart{"loss",
                  "step",
                  "loss",
                  false,
                  {{"a", {{0, 1.0}, {1, 0.5}, {2, NAN}, {3, 0.25}}, "#000", 1.0, false},
                   {"b <&>", {{0, 2.0}, {3, 1.0}}, "#f00", 1.0, true}}};
  const auto svg = render_line_chart(chart);
  CHECK(svg.rfind("<svg class=\"chart\" data-kind=\"line\"", 0) == 0);
  std::size_t paths = 0;
  for (auto p = svg.find("class=\"series\""); p != std::string::npos;
       p = svg.find("class=\"series\"", p + 1)) {
    ++paths;
  }
  CHECK(paths == 2);
  CHECK_THAT(svg, Catch::Contains("b &lt;&amp;&gt;"));
  // The NaN point breaks the line: a second move-to in series a.
  const auto first = svg.find("d=\" M");
  CHECK(svg.find(" M", first + 5) < svg.find("</path>", first));

  HeatmapChart heat{"h", "x", "y", {"1", "2"}, {"a"}, {{0.01, std::nullopt}}, {{"1%", ""}}, "v"};
  const auto h = render_heatmap(heat);
  CHECK(h.find("class=\"cell\"") != std::string::npos);
  CHECK_THAT(h, Catch::Contains("fill=\"#eeeeee\""));  // the empty cell
}

TEST_CASE("write_reports writes all four files, and report.html is self-contained", "[report]") {
  const testing::Scratch dir("reports");
  ResultsDirectory store(dir);
  store.write_run_record(baseline_record());
  store.write_run_record(fp8_record("hybrid", "HYBRID", 0, 2.01));
  store.write_run_record(fp8_record("e5m2", "E5M2", 0, 2.2));
  store.write_run_record(fp8_record("huge-margin", "HYBRID", 30, 3.9));
  store.write_run_record(fp8_record("nan", "E4M3", 0, 2.0, "diverged"));
  const auto paths = write_reports(ReportOptions{{dir}, {}, {}});
  CHECK(paths.records == 5);
  const auto jsonl = read_text(paths.results_jsonl);
  CHECK(std::count(jsonl.begin(), jsonl.end(), '\n') == 5);
  const auto html = read_text(paths.report_html);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // only the SVG xmlns
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<script src") == std::string::npos);
  CHECK_THAT(html, Catch::Contains("data-kind=\"heatmap\""));
  CHECK_THAT(html, Catch::Contains("failed to train"));
  CHECK_THAT(html, Catch::Contains("diverged (1 of 1 seed diverged) at step 7"));
  const auto md = read_text(paths.report_md);
  CHECK_THAT(md, Catch::Contains("| 1 | HYBRID m0 | 0 | inconclusive (1 seed with a paired "
                                 "error; a test needs 3) |"));
  CHECK_THAT(md, Catch::Contains("failed to train"));
}

// Rows that differ only in a workload option (L8: llama-xs:smooth_swiglu=true against llama-xs)
// are labelled apart in report.md, report.html, summary.csv and contrasts.csv; the records keep
// their recipe labels.
TEST_CASE("Report rows that differ only in a workload option have distinct labels", "[report]") {
  const testing::Scratch dir("reports-workload-option");
  ResultsDirectory store(dir);
  for (const bool smooth : {false, true}) {
    const std::string spec = smooth ? "w:smooth_swiglu=true" : "w";
    const std::string suffix = smooth ? "-smooth" : "";
    auto baseline = baseline_record();
    baseline["run_id"] = baseline_id(0) + suffix;
    baseline["workload"] = spec;
    baseline["workload_options"] = {{"smooth_swiglu", smooth}, {"lr", 0.003}};
    store.write_run_record(baseline);
    for (const auto& [format, final_loss] : {std::pair{"HYBRID", 2.01}, {"E5M2", 2.2}}) {
      auto run =
          fp8_record(std::string(format) + suffix, format, 0, final_loss + (smooth ? 0.01 : 0.0));
      run["baseline_run_id"] = baseline["run_id"];
      run["workload"] = spec;
      run["workload_options"] = baseline["workload_options"];
      store.write_run_record(run);
    }
  }
  const auto paths = write_reports(ReportOptions{{dir}, {}, {}});
  const auto md = read_text(paths.report_md);
  INFO(md);
  // The ranked table: four rows, none sharing a label.
  for (const char* label :
       {"| HYBRID m0 (smooth_swiglu=false) |", "| HYBRID m0 (smooth_swiglu=true) |",
        "| E5M2 m0 (smooth_swiglu=false) |", "| E5M2 m0 (smooth_swiglu=true) |"}) {
    CHECK_THAT(md, Catch::Contains(label));
  }
  CHECK_THAT(md, !Catch::Contains("| HYBRID m0 |"));
  // Each workload's contrast names its rows with the option; lr, set alike, stays out.
  const auto contrasts = read_text(paths.contrasts_csv);
  CHECK_THAT(contrasts, Catch::Contains("E5M2 m0 (smooth_swiglu=true),HYBRID m0 "
                                        "(smooth_swiglu=true)"));
  CHECK_THAT(contrasts, Catch::Contains("E5M2 m0 (smooth_swiglu=false),HYBRID m0 "
                                        "(smooth_swiglu=false)"));
  CHECK_THAT(read_text(paths.summary_csv), Catch::Contains("HYBRID m0 (smooth_swiglu=true)"));
  CHECK_THAT(read_text(paths.report_html), Catch::Contains("HYBRID m0 (smooth_swiglu=false)"));
  CHECK_THAT(md, !Catch::Contains("lr="));
  // The records written back keep their recipe labels.
  const auto jsonl = read_text(paths.results_jsonl);
  CHECK_THAT(jsonl, Catch::Contains("\"recipe_label\":\"HYBRID m0\""));
  CHECK_THAT(jsonl, !Catch::Contains("smooth_swiglu=false"));
}

TEST_CASE("label_workload_differences: the workload's name and options that vary, else nothing",
          "[report]") {
  const auto records_of = [](const std::vector<std::pair<std::string, nlohmann::json>>& runs) {
    std::vector<RunRecord> out;
    for (const auto& [spec, options] : runs) {
      auto r = fp8_record(fmt::format("r{}", out.size()), "HYBRID", 0, 2.0);
      r["workload"] = spec;
      if (!options.is_null()) r["workload_options"] = options;
      out.push_back(typed(r));
    }
    label_workload_differences(out);
    std::vector<std::string> labels;
    for (const auto& r : out) labels.push_back(run_label(r));
    return labels;
  };
  using Labels = std::vector<std::string>;
  // The same workload everywhere: the recipe labels alone.
  CHECK(records_of({{"w:steps=100", nullptr}, {"w:steps=100", nullptr}}) ==
        Labels{"HYBRID m0", "HYBRID m0"});
  // An option set in one and not the other: its resolved value, else "default"; one set alike
  // (steps) stays out.
  CHECK(records_of({{"w:steps=100,lr=0.01", nullptr},
                    {"w:steps=100", {{"lr", 0.003}}},
                    {"w:steps=100", nullptr}}) ==
        Labels{"HYBRID m0 (lr=0.01)", "HYBRID m0 (lr=0.003)", "HYBRID m0 (lr=default)"});
  // Two workloads: the name, then what varies within that name's records.
  CHECK(records_of({{"a:d=1", nullptr}, {"a:d=2", nullptr}, {"b:d=1", nullptr}}) ==
        Labels{"HYBRID m0 (a:d=1)", "HYBRID m0 (a:d=2)", "HYBRID m0 (b)"});
}

}  // namespace fp8lab::experiments

namespace fp8lab::experiments {

TEST_CASE("RunRecord: a record read and written back is the same JSON text", "[report][record]") {
  // Hand-made records, a null where a number was not finite, a field older records lack
  // (absent stays absent), and a field this struct does not type (kept in `other`).
  auto fp8 = testing::fp8_record("r1", "HYBRID", 0, 2.0);
  fp8["final"]["eval_loss_se"] = nullptr;
  fp8["final"].erase("weight_rel_l2");
  fp8["upstream"] = {{"runner", "Transformer Engine"}, {"runnable", true}};
  fp8["some_future_field"] = {1, 2.5, "x"};
  for (const auto& json : {testing::baseline_record(), fp8}) {
    const RunRecord record = run_record_from_json(json);
    CHECK(to_json(record).dump() == json.dump());
  }
  const RunRecord record = run_record_from_json(fp8);
  CHECK(record.final->eval_loss_se.present());
  CHECK(record.final->eval_loss_se.is_null());
  CHECK_FALSE(record.final->weight_rel_l2.present());
  CHECK(record.other.contains("upstream"));
  // A typed field of another JSON type is refused, naming it.
  auto wrong = fp8;
  wrong["final"]["eval_loss"] = "2.0";
  CHECK_THROWS_WITH(run_record_from_json(wrong),
                    Catch::Contains("run record field /final/eval_loss"));
}

}  // namespace fp8lab::experiments
