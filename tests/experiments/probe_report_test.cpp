// The report's section "On the baseline's trajectory" (probe_report.hpp), from hand-made records
// and synthetic sidecars (no training):
// - write_reports finds each record's probe sidecar under the directory it read the record from,
//   and the section leads both reports: the recipe table with intervals, the crossing step and
//   the worst tensor, the own-runs table, the stochastic table, the pairwise table, the line chart
//   and the attribution heatmap (SVG in report.html, a table in report.md), and "Does it
//   predict?" saying that two recipes cannot tell, also when the rows' labels carry workload
//   options (the probes name the recipe alone);
// - without sidecars the section is absent: the report is the one with the section cut out, byte
//   for byte; an unreadable sidecar is named in the section.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/render/html_report.hpp"
#include "experiments/render/markdown_report.hpp"
#include "experiments/render/write_reports.hpp"
#include "experiments/results/probe_sidecar.hpp"
#include "tests/experiments/report_test_support.hpp"
#include "tests/support/cli.hpp"

using namespace fp8lab::experiments;
using fp8lab::testing::baseline_record;
using fp8lab::testing::fp8_record;

namespace {

ProbeRow probe(const std::string& direction, const std::string& recipe, std::int64_t step,
               const std::string& variant, const std::string& tensor, double rel_error,
               std::int64_t draw = 0) {
  ProbeRow row = probe_row(step, direction, recipe, variant, draw, tensor);
  row.rel_error = rel_error;
  row.cosine = 1 - rel_error * rel_error / 2;
  row.bias = -rel_error / 4;
  row.noise = rel_error * 0.96;
  row.chmiel_ratio = 1 / rel_error;
  row.update_rel_error = 3 * rel_error;
  row.draw_spread = draw == kMeanOfDraws ? 0.02 : std::nan("");
  return row;
}

// A baseline's probes of two recipes over 30 steps: "E5M2 m0" errs 4x "E4M3 m0" and crosses
// sqrt(3) (rel_error > 0.577) from step 200; "sr" is stochastic with its mean-of-draws rows.
std::vector<ProbeRow> baseline_probes() {
  std::vector<ProbeRow> rows;
  for (std::int64_t step = 0; step < 300; step += 10) {
    const double wobble = 0.01 * std::sin(static_cast<double>(step));
    const double e4 = 0.05 + wobble;
    const double e5 = step >= 200 ? 0.7 + wobble : 0.2 + wobble;
    rows.push_back(probe(kOnBaseline, "E4M3 m0", step, kAllGemms, kWholeModel, e4));
    rows.push_back(probe(kOnBaseline, "E5M2 m0", step, kAllGemms, kWholeModel, e5));
    rows.push_back(probe(kOnBaseline, "E5M2 m0", step, kAllGemms, "fc1.weight", 2 * e5));
    rows.push_back(probe(kOnBaseline, "E5M2 m0", step, kAllGemms, "fc2.weight", e5));
    rows.push_back(probe(kOnBaseline, "E5M2 m0", step, kWgradOnly, "fc1.weight", 0.5));
    rows.push_back(probe(kOnBaseline, "E5M2 m0", step, kFpropOnly, "fc1.weight", 0.1));
    rows.push_back(probe(kOnBaseline, "E5M2 m0", step, kDgradOnly, "fc1.weight", 0.2));
    for (std::int64_t draw = 0; draw < 4; ++draw) {
      rows.push_back(probe(kOnBaseline, "sr", step, kAllGemms, kWholeModel, 0.1 + wobble, draw));
    }
    auto mean = probe(kOnBaseline, "sr", step, kAllGemms, kWholeModel, 0.05, kMeanOfDraws);
    mean.bias = wobble / 10;  // around 0
    rows.push_back(mean);
  }
  return rows;
}

std::vector<ProbeRow> own_run_probes() {
  std::vector<ProbeRow> rows;
  for (std::int64_t step = 0; step < 300; step += 10) {
    rows.push_back(probe(kExactOnRun, "E5M2 m0", step, kAllGemms, kWholeModel, 0.3));
  }
  return rows;
}

void write_record(const std::filesystem::path& dir, const nlohmann::json& record) {
  std::filesystem::create_directories(dir / "runs");
  std::ofstream(dir / "runs" / (record["run_id"].get<std::string>() + ".json"))
      << record.dump() << "\n";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The records: a baseline per seed and two recipes on three seeds, with a layers row naming the
// Linears fc1 and fc2.
std::vector<nlohmann::json> records() {
  std::vector<nlohmann::json> out;
  for (int seed = 0; seed < 3; ++seed) {
    auto baseline = baseline_record(seed);
    baseline["layers"] = {{{"step", 0}, {"layer", "fc1"}}, {{"step", 0}, {"layer", "fc2"}}};
    out.push_back(baseline);
    out.push_back(fp8_record("e4-" + std::to_string(seed), "E4M3", 0, 2.001 + 0.001 * seed,
                             "finished", seed));
    out.push_back(
        fp8_record("e5-" + std::to_string(seed), "E5M2", 0, 2.02 + 0.001 * seed, "finished", seed));
  }
  return out;
}

std::size_t position(const std::string& text, const std::string& what) {
  const auto at = text.find(what);
  INFO("looking for: " << what);
  REQUIRE(at != std::string::npos);
  return at;
}

// The line of `text` that starts with `start`, the first at or after `from`.
std::string line_of(const std::string& text, const std::string& start, std::size_t from) {
  const auto at = text.find("\n" + start, from);
  INFO("looking for a line starting: " << start);
  REQUIRE(at != std::string::npos);
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("the probe section leads the report, from the sidecars the records name",
          "[report][probes]") {
  const fp8lab::testing::Scratch dir("probe-report");
  auto all = records();
  all[0]["probe_sidecar"] = "probes/baseline-w-seed0-fp32.parquet";
  write_probes(dir / "probes/baseline-w-seed0-fp32.parquet", baseline_probes());
  all[2]["probe_sidecar"] = "probes/e5-0.parquet";  // e5-0
  write_probes(dir / "probes/e5-0.parquet", own_run_probes());
  for (const auto& r : all) write_record(dir, r);
  ReportOptions options;
  options.inputs = {dir.path()};
  const auto paths = write_reports(options);
  const auto md = read_text(paths.report_md);
  const auto html = read_text(paths.report_html);

  // Leading: before the ranked table, in both.
  CHECK(position(md, "\n## On the baseline's trajectory\n") < position(md, "\n## Recipes ranked"));
  CHECK(position(html, "<h2>On the baseline&#39;s trajectory</h2>") <
        position(html, "<h2>Recipes ranked"));
  // The recipe table: E4M3's relative error 0.05 with an interval; E5M2 crosses at 200; its
  // worst tensor is fc1.weight; sr never crosses.
  const auto table = position(md, "\n## On the baseline's trajectory\n");
  const auto e4 = line_of(md, "| E4M3 m0 | ", table);
  const auto e5 = line_of(md, "| E5M2 m0 | ", table);
  const auto sr = line_of(md, "| sr | ", table);
  INFO(e4 << "\n" << e5 << "\n" << sr);
  CHECK(e4.find(" | 0.05012 [0.04") != std::string::npos);  // rel. error, with its interval
  CHECK(e4.find("| never |") != std::string::npos);
  CHECK(e5.find("| 200 |") != std::string::npos);
  CHECK(e5.find("`fc1.weight (0.") != std::string::npos);
  CHECK(sr.find("| never |") != std::string::npos);
  // The own runs' table has E5M2's exact_on_run rows.
  const auto own =
      position(md, "## On the baseline's trajectory: the same, in each recipe's own runs");
  CHECK(md.find("| E5M2 m0 | ", own) != std::string::npos);
  // Stochastic: sr's mean-of-draws bias and spread.
  const auto stochastic = position(md, "## On the baseline's trajectory: stochastic recipes");
  CHECK(md.find("| sr | ", stochastic) != std::string::npos);
  // Pairs: E4M3 better than E5M2 and than sr, after Holm (9 rows: 3 pairs x 3 metrics).
  const auto pairs = position(md, "## On the baseline's trajectory: recipes against each other");
  CHECK(md.find("| relative error | E4M3 m0 | E5M2 m0 | 30 |", pairs) != std::string::npos);
  CHECK(md.find("(9) | better |", pairs) != std::string::npos);
  // The attribution: fc1.weight's wgrad-only error 0.5 (a table in report.md, SVG in HTML).
  const auto heat = position(md, "## On the baseline's trajectory: attribution, E5M2 m0");
  CHECK(md.find("| `fc1.weight` | 0.1 | 0.2 | 0.5 |", heat) != std::string::npos);
  CHECK_THAT(html, Catch::Contains("data-kind=\"heatmap\""));
  CHECK_THAT(html, Catch::Contains("Whole-model gradient error on the baseline"));
  // Does it predict: two probed recipes trained, too few to tell.
  const auto predict = position(md, "## Does it predict?");
  CHECK(md.find("Cannot tell: 2 recipes", predict) != std::string::npos);
  CHECK(md.find("at least 5", predict) != std::string::npos);
}

TEST_CASE("Does it predict? matches a probed recipe whose rows are labelled with workload options",
          "[report][probes]") {
  // The rows' labels add the workload options that differ among the records (run_label: "E4M3 m0
  // (opt=a)"); the probes name the recipe alone ("E4M3 m0"), so the match is by recipe label.
  const fp8lab::testing::Scratch dir("probe-report-options");
  auto all = records();
  for (auto& r : all) {
    if (r["kind"] == "fp8")
      r["workload"] = r["run_id"].get<std::string>()[1] == '4' ? "w:opt=a" : "w:opt=b";
  }
  all[0]["probe_sidecar"] = "probes/baseline-w-seed0-fp32.parquet";
  write_probes(dir / "probes/baseline-w-seed0-fp32.parquet", baseline_probes());
  for (const auto& r : all) write_record(dir, r);
  ReportOptions options;
  options.inputs = {dir.path()};
  const auto md = read_text(write_reports(options).report_md);
  const auto section = md.substr(position(md, "## Does it predict?"));
  for (const char* expected :
       {"Cannot tell: 2 recipes", "| E4M3 m0 (opt=a) | 0.05", "| E5M2 m0 (opt=b) | "}) {
    CHECK_THAT(section, Catch::Contains(expected));
  }
}

TEST_CASE("without probe sidecars the report is the one without the section, byte for byte",
          "[report][probes]") {
  const fp8lab::testing::Scratch dir("probe-report-absent");
  auto all = records();
  all[0]["probe_sidecar"] = nullptr;  // a run that probed nothing
  ReportInput input = fp8lab::testing::report_input_of(all);
  const auto md = render_markdown_report(input);
  const auto html = render_html_report(input);
  CHECK(md.find("On the baseline's trajectory") == std::string::npos);
  CHECK(md.find("Does it predict?") == std::string::npos);
  CHECK(html.find("On the baseline&#39;s trajectory") == std::string::npos);

  write_probes(dir / "b.parquet", baseline_probes());
  input.probe_files["baseline-w-seed0-fp32"] = dir / "b.parquet";
  const auto md_with = render_markdown_report(input);
  const auto html_with = render_html_report(input);
  // The section runs from its title to the ranked table; cut out, the rest is unchanged.
  const auto cut = [](const std::string& text, const std::string& from, const std::string& to) {
    const auto a = text.find(from), b = text.find(to);
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    return text.substr(0, a) + text.substr(b);
  };
  CHECK(cut(md_with, "\n## On the baseline's trajectory\n", "\n## Recipes ranked") == md);
  CHECK(cut(html_with, "<h2>On the baseline&#39;s trajectory</h2>", "<h2>Recipes ranked") == html);

  // A sidecar that cannot be read is named, and the rest of the report stands.
  input.probe_files["baseline-w-seed0-fp32"] = dir / "gone.parquet";
  const auto md_gone = render_markdown_report(input);
  CHECK_THAT(md_gone, Catch::Contains("Not read: run baseline-w-seed0-fp32: probe sidecar"));
  CHECK_THAT(md_gone, Catch::Contains("gone.parquet"));
}
