// No silent drops in `fp8lab report` (issue 19, item 3), and FP8 run ids that name --steps. Two
// directories or two results.jsonl lines holding one run id with different results used to be
// merged by keeping the first; now they are refused naming both sources, or resolved by
// --prefer newest, which says what it kept. Also: the report's Markdown keeps a <script> from a
// name as text (item 7).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/linear/cuda_backend.hpp"
#include "experiments/results/results_store.hpp"
#include "experiments/run/run_ids.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::baseline_record;
using testing::fp8_record;
using testing::read_text;
using testing::run_to_end;

nlohmann::json with_steps(nlohmann::json record, int steps, const std::string& finished_at) {
  record["steps_planned"] = steps;
  record["steps_completed"] = steps;
  record["finished_at"] = finished_at;
  return record;
}

}  // namespace

TEST_CASE("Two different records of one run id in two directories are refused, naming both",
          "[hardening][report]") {
  const testing::Scratch dir("dup-dirs");
  const auto a = dir / "a", b = dir / "b";
  ResultsDirectory(a).write_run_record(baseline_record());
  ResultsDirectory(b).write_run_record(baseline_record());  // the same baseline: kept once
  ResultsDirectory(a).write_run_record(
      with_steps(fp8_record("r1", "HYBRID", 0, 2.0), 3, "2026-01-01T00:00:00Z"));
  ResultsDirectory(b).write_run_record(
      with_steps(fp8_record("r1", "HYBRID", 0, 2.2), 5, "2026-01-02T00:00:00Z"));
  const auto log = dir / "report.log";
  CHECK(run_to_end(
            {FP8LAB_EXECUTABLE, "report", a.string(), b.string(), "--out", (dir / "out").string()},
            log) == 2);
  const auto text = read_text(log);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("run r1 has two different records, in " +
                                   (a / "runs" / "r1.json").string() + " and " +
                                   (b / "runs" / "r1.json").string() + " (steps_planned 3 vs 5)") &&
                       Catch::Contains("--prefer newest"));
  CHECK_FALSE(fs::exists(dir / "out" / "report.md"));

  // --prefer newest keeps b's (finished later), whichever order the directories come in, and
  // says so on stderr and in the report's notes.
  for (const auto& order : {std::vector<fs::path>{a, b}, std::vector<fs::path>{b, a}}) {
    const auto chosen = dir / "chosen.log";
    const auto out = dir / "out";
    CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", order[0].string(), order[1].string(), "--out",
                      out.string(), "--prefer", "newest"},
                     chosen) == 0);
    const auto said = read_text(chosen);
    INFO(said);
    CHECK_THAT(said, Catch::Contains("--prefer newest kept " + (b / "runs" / "r1.json").string() +
                                     " (finished 2026-01-02T00:00:00Z)"));
    CHECK_THAT(read_text(out / "results.jsonl"),
               Catch::Contains("\"steps_planned\":5") && !Catch::Contains("\"steps_planned\":3"));
    CHECK_THAT(read_text(out / "report.md"), Catch::Contains("--prefer newest kept"));
  }
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", a.string(), "--prefer", "oldest"},
                   dir / "bad.log") == 2);
  CHECK_THAT(read_text(dir / "bad.log"), Catch::Contains("--prefer") && Catch::Contains("newest"));
}

TEST_CASE("Conflicting duplicate lines of results.jsonl are refused, naming both lines",
          "[hardening][report]") {
  const testing::Scratch dir("dup-lines");
  const auto copy = dir / "copied";
  fs::create_directories(copy);
  std::ofstream(copy / "results.jsonl")
      << baseline_record().dump() << "\n"
      << with_steps(fp8_record("r1", "HYBRID", 0, 2.0), 3, "2026-01-01T00:00:00Z").dump() << "\n"
      << baseline_record().dump() << "\n"  // an identical repeat: kept once
      << with_steps(fp8_record("r1", "HYBRID", 0, 2.0, "diverged"), 3, "2026-01-03T00:00:00Z").dump()
      << "\n";
  const auto log = dir / "report.log";
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", copy.string(), "--out", (dir / "o").string()},
                   log) == 2);
  const auto path = (copy / "results.jsonl").string();
  CHECK_THAT(read_text(log),
             Catch::Contains("run r1 has two different records, in " + path + ":2 and " + path +
                             ":4 (status \"finished\" vs "
                             "\"diverged\")"));
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", copy.string(), "--out", (dir / "o").string(),
                    "--prefer", "newest"},
                   log) == 0);
  CHECK_THAT(read_text(log), Catch::Contains("--prefer newest kept " + path + ":4"));
}

TEST_CASE("report.md keeps a <script> from a record as text", "[hardening][report]") {
  const testing::Scratch dir("md-script");
  auto run = fp8_record("r1", "HYBRID", 0, 2.0, "failed");
  run["recipe_label"] = "<script>alert(1)</script> HYBRID";
  run["error"] = "<script>alert(2)</script>";
  ResultsDirectory(dir).write_run_record(baseline_record());
  ResultsDirectory(dir).write_run_record(run);
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", dir.string()}, dir / "report.log") == 0);
  const auto md = read_text(dir / "report.md");
  INFO(md);
  CHECK_THAT(md, Catch::Contains("&lt;script>alert(1)") && Catch::Contains("&lt;script>alert(2)"));
  CHECK_THAT(md, !Catch::Contains("<script>"));
}

TEST_CASE("FP8 run ids name --steps as baseline ids do", "[hardening][report]") {
  const BackendChoice sim{"sim", 0}, cuda{"cuda", 0};
  CHECK(fp8_run_id("0f0e68dece316888", std::nullopt, sim) == "0f0e68dece316888");
  CHECK(fp8_run_id("0f0e68dece316888", 3, sim) == "0f0e68dece316888-steps3");
  CHECK(fp8_run_id("0f0e68dece316888", 5, cuda) == "0f0e68dece316888-steps5-cuda");
  CHECK(baseline_run_id("mlp", 0, HighPrecision::fp32, 3) == "baseline-mlp-seed0-fp32-steps3");

  // Through the CLI: the same sweep at 2 and 3 steps files its FP8 run under two ids, and a
  // directory written before the change (FP8 ids without -steps) is adopted by --resume.
  const testing::Scratch dir("steps-ids");
  std::ofstream(dir / "sweep.yaml") << "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                                       "parameters:\n  margin: {values: [0]}\n";
  auto sweep = [&](const fs::path& out, const std::string& steps, bool resume) {
    std::vector<std::string> a = {
        FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out", out.string(),
        "--steps",         steps};
    if (resume) a.push_back("--resume");
    return run_to_end(a, dir / ("sweep-" + steps + ".log"));
  };
  REQUIRE(sweep(dir / "two", "2", false) == 0);
  REQUIRE(sweep(dir / "three", "3", false) == 0);
  std::string id2, id3;
  for (const auto& id : ResultsDirectory(dir / "two").recorded_run_ids()) {
    if (id.rfind("baseline-", 0) != 0) id2 = id;
  }
  for (const auto& id : ResultsDirectory(dir / "three").recorded_run_ids()) {
    if (id.rfind("baseline-", 0) != 0) id3 = id;
  }
  INFO(id2 << " " << id3);
  CHECK_THAT(id2, Catch::EndsWith("-steps2"));
  CHECK_THAT(id3, Catch::EndsWith("-steps3"));
  CHECK(id2.substr(0, 16) == id3.substr(0, 16));  // one recipe, workload and seed
  // Both directories in one report: two runs, no conflict.
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", (dir / "two").string(), (dir / "three").string(),
                    "--out", (dir / "both").string()},
                   dir / "both.log") == 0);

  // The old layout: the FP8 record under the id without -steps2.
  const auto old_id = id2.substr(0, 16);
  const ResultsDirectory two(dir / "two");
  auto record = read_run_record_file(two.run_record_path(id2)).record.value();
  record["run_id"] = old_id;
  two.write_run_record(record);
  fs::remove(two.run_record_path(id2));
  CHECK(sweep(dir / "two", "2", true) == 0);
  const auto log = read_text(dir / "sweep-2.log");
  INFO(log);
  CHECK_THAT(log, Catch::Contains("was filed under " + old_id + " before run ids named --steps"));
  CHECK(two.has_record(id2));
  CHECK_FALSE(fs::exists(two.run_record_path(old_id)));
  // Adopted, not rerun: its log holds one start only.
  const auto run_log = read_text(dir / "two" / "logs" / (id2 + ".log"));
  CHECK(run_log.find("started") == run_log.rfind("started"));
}

}  // namespace fp8lab::experiments
