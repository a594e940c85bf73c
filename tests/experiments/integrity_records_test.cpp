// Stub run records (issue 13, data integrity): a runs/<id>.json that is empty, truncated or not a
// complete record is not a finished run. read_run_record_file names what is wrong; `fp8lab report`
// stops with that message (exit 2); `fp8lab sweep --resume` sets the file aside as
// runs/.<id>.json.invalid-<n> and runs the run again, and only that run.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/results/results_reader.hpp"
#include "experiments/results/results_store.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::count_of;
using testing::read_text;
using testing::run_to_end;
using testing::write_text;

const nlohmann::json kRecord = {{"schema", "fp8lab.run"}, {"schema_version", 1},
                                {"run_id", "r1"},         {"kind", "fp8"},
                                {"status", "finished"},   {"workload", "mlp"}};

}  // namespace

TEST_CASE("read_run_record_file names why a file is not a finished run's record",
          "[integrity][records]") {
  const testing::Scratch dir("record-files");
  const auto path = dir / "runs" / "r1.json";
  const std::string good = kRecord.dump() + "\n";
  auto with = [](const char* key, const nlohmann::json& value) {
    auto r = kRecord;
    r[key] = value;
    return r.dump() + "\n";
  };
  auto without = [](const char* key) {
    auto r = kRecord;
    r.erase(key);
    return r.dump() + "\n";
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty file (0 bytes)"},
      {" \n\n", "holds only white space"},
      {good.substr(0, good.size() / 2), "truncated (no final newline): not one JSON object"},
      {good + good, "not one JSON object"},
      {"[1, 2]\n", "a record must be a JSON object"},
      {"{}\n", "field 'schema' is null, expected \"fp8lab.run\""},
      {with("schema", "fp8lab.sweep"), "field 'schema' is \"fp8lab.sweep\""},
      {without("schema_version"), "record has no field 'schema_version'"},
      {without("status"), "record has no field 'status'"},
      {without("kind"), "record has no field 'kind'"},
      {with("schema_version", 2), "schema_version 2 is not one this fp8lab reads (1..1)"},
      {with("schema_version", "1"), "schema_version \"1\" is not one"},
      {with("status", "running"),
       "status \"running\" is not one of finished, diverged, unstable, failed"},
      {with("kind", "fp16"), "kind \"fp16\" is not one of fp8, baseline"},
      {with("run_id", 7), "field 'run_id' is 7, not a string"},
      {with("run_id", "r2"), "run_id \"r2\" is not the file's name (r1)"},
  };
  const ResultsDirectory results(dir);
  for (const auto& [text, problem] : cases) {
    INFO("file text: " << text);
    write_text(path, text);
    const auto file = read_run_record_file(path);
    CHECK(file.exists);
    CHECK_FALSE(file.record.has_value());
    CHECK_THAT(file.problem, Catch::Contains(problem));
    CHECK_FALSE(results.has_record("r1"));
    CHECK(results.recorded_run_ids().empty());
    CHECK_THROWS_WITH(load_results({dir}),
                      Catch::Contains(path.string() + ":1: ") && Catch::Contains(problem));
  }
  write_text(path, good);
  CHECK(read_run_record_file(path).record == kRecord);
  CHECK(results.has_record("r1"));
  CHECK(results.recorded_run_ids() == std::set<std::string>{"r1"});
  CHECK_FALSE(read_run_record_file(dir / "runs" / "absent.json").exists);

  // Set aside: renamed, bytes kept, numbered so that a second bad file does not overwrite it.
  write_text(path, "");
  results.set_aside(read_run_record_file(path));
  write_text(path, "{\"schema\": \"fp8lab.run\"}\n");
  const auto second = results.set_aside(read_run_record_file(path));
  CHECK(second == dir / "runs" / ".r1.json.invalid-2");
  CHECK(fs::file_size(dir / "runs" / ".r1.json.invalid-1") == 0);
  CHECK(read_text(second) == "{\"schema\": \"fp8lab.run\"}\n");
  CHECK_FALSE(fs::exists(path));
  CHECK(results.run_record_files().empty());  // set-aside files are not records
}

TEST_CASE("report refuses stub records; sweep --resume sets them aside and reruns only them",
          "[integrity][records][resume]") {
  const testing::Scratch dir("stub-records");
  write_text(
      dir / "sweep.yaml",
      "method: grid\nworkloads: [mlp]\nseeds: [0]\nparameters:\n  margin: {values: [0, 1, 2]}\n");
  const auto out = dir / "out";
  const std::vector<std::string> sweep = {
      FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out", out.string(),
      "--steps",         "2"};
  REQUIRE(run_to_end(sweep, dir / "first.log") == 0);
  const ResultsDirectory results(out);
  const auto ids = results.recorded_run_ids();
  REQUIRE(ids.size() == 4);  // the baseline and three runs
  std::vector<std::string> fp8_ids;
  for (const auto& id : ids) {
    if (!id.starts_with("baseline-")) fp8_ids.push_back(id);
  }
  REQUIRE(fp8_ids.size() == 3);
  const auto emptied = results.run_record_path(fp8_ids[0]);
  const auto stubbed = results.run_record_path(fp8_ids[1]);
  const auto kept = results.run_record_path(fp8_ids[2]);
  const std::string kept_bytes = read_text(kept);
  write_text(emptied, "");
  write_text(stubbed, "{\"schema\": \"fp8lab.run\", \"run_id\": \"" + fp8_ids[1] + "\"}\n");

  // The report names the first bad file (sorted) and what is wrong with it.
  const auto first_bad = std::min(emptied, stubbed);
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", out.string()}, dir / "report1.log") == 2);
  const auto report1 = read_text(dir / "report1.log");
  CHECK_THAT(report1, Catch::Contains(first_bad.string() + ":1: ") &&
                          Catch::Contains("not a finished run's record"));

  // Without --resume the directory is refused (it holds records, valid or not).
  CHECK(run_to_end(sweep, dir / "refused.log") == 2);
  CHECK_THAT(read_text(dir / "refused.log"), Catch::Contains("already holds 4 run records"));

  auto resume = sweep;
  resume.push_back("--resume");
  REQUIRE(run_to_end(resume, dir / "resume.log") == 0);
  const auto resume_log = read_text(dir / "resume.log");
  INFO(resume_log);
  CHECK_THAT(resume_log, Catch::Contains(emptied.string() + " is not a finished run's record "
                                                            "(empty file (0 bytes)); kept as"));
  CHECK_THAT(resume_log,
             Catch::Contains(stubbed.string() + " is not a finished run's record "
                                                "(record has no field 'schema_version')"));
  CHECK_THAT(resume_log, Catch::Contains("2 processes run now"));
  CHECK(fs::file_size(out / "runs" / ("." + fp8_ids[0] + ".json.invalid-1")) == 0);
  CHECK(fs::exists(out / "runs" / ("." + fp8_ids[1] + ".json.invalid-1")));
  CHECK(results.recorded_run_ids() == ids);
  CHECK(read_text(kept) == kept_bytes);  // the valid record was not rerun
  // Each log has one "started" line per execution: the two stubs ran twice, the rest once.
  for (const auto& id : ids) {
    const auto log = read_text(out / "logs" / (id + ".log"));
    const bool rerun = id == fp8_ids[0] || id == fp8_ids[1];
    CHECK(count_of(log, "fp8lab run " + id + ": started") == (rerun ? 2u : 1u));
  }
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", out.string()}, dir / "report2.log") == 0);
}

}  // namespace fp8lab::experiments
