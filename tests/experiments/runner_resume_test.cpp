// Kill a sweep mid-run, rerun it with --resume: no finished run is lost (every distinct run ends
// with one record and the layer statistics sidecar it names) and none is repeated (records and
// sidecars written before the kill are the same files, byte for byte, and their runs started
// exactly once according to their logs). Runs the real
// `fp8lab sweep` executable in child processes on a small gpt-tiny sweep.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "experiments/results/results_store.hpp"
#include "experiments/sweep/child_process.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::run_to_end;

// The sidecar a run's record names (docs/results-schema.md), or "" when it names none.
fs::path sidecar_of(const ResultsDirectory& results, const std::string& id) {
  const auto record = testing::read_json(results.run_record_path(id));
  const auto& relative = record["layer_stats_sidecar"];
  return relative.is_string() ? results.root() / relative.get<std::string>() : fs::path();
}

}  // namespace

TEST_CASE("A sweep killed mid-run resumes without losing or repeating a finished run",
          "[runner][resume]") {
  const testing::Scratch dir("resume");
  // 6 distinct runs of gpt-tiny.
  std::ofstream(dir / "sweep.yaml") << "method: grid\nworkloads: [gpt-tiny]\nseeds: [0]\n"
                                       "parameters:\n  fp8_format: {values: [HYBRID, E4M3, E5M2]}\n"
                                       "  margin: {values: [0, 1]}\n";
  const auto out = dir / "out";
  const std::vector<std::string> sweep = {FP8LAB_EXECUTABLE,
                                          "sweep",
                                          (dir / "sweep.yaml").string(),
                                          "--out",
                                          out.string(),
                                          "--jobs",
                                          "2",
                                          "--steps",
                                          "40"};
  const ResultsDirectory results(out);

  // First attempt: killed (SIGKILL, no chance to clean up) once two FP8 runs are recorded.
  const pid_t pid = start_child(sweep, dir / "first.log");
  std::size_t recorded = 0;
  testing::eventually(
      [&] {
        recorded = results.recorded_run_ids().size();
        return recorded >= 3;  // the baseline and two runs
      },
      std::chrono::minutes(5));
  ::kill(pid, SIGKILL);
  testing::wait_exit(pid);
  REQUIRE(recorded >= 3);
  std::map<std::string, std::pair<std::string, fs::file_time_type>> before, sidecars_before;
  for (const auto& id : results.recorded_run_ids()) {
    before[id] = {read_text(results.run_record_path(id)),
                  fs::last_write_time(results.run_record_path(id))};
    if (const auto sidecar = sidecar_of(results, id); !sidecar.empty()) {
      sidecars_before[id] = {read_text(sidecar), fs::last_write_time(sidecar)};
    }
  }
  INFO("recorded before the kill: " << before.size());
  REQUIRE(before.size() < 7);  // killed mid-sweep: something is left to do

  // Without --resume the directory is refused; with it the sweep completes.
  CHECK(run_to_end(sweep, dir / "refused.log") == 2);
  CHECK_THAT(read_text(dir / "refused.log"), Catch::Contains("pass --resume"));
  REQUIRE(run_to_end(testing::plus(sweep, {"--resume"}), dir / "second.log") == 0);

  const auto after = results.recorded_run_ids();
  CHECK(after.size() == 7);  // 6 runs + the baseline
  for (const auto& [id, record] : before) {
    INFO("run " << id);
    CHECK(read_text(results.run_record_path(id)) == record.first);
    CHECK(fs::last_write_time(results.run_record_path(id)) == record.second);
    if (id.rfind("baseline-", 0) != 0) {
      CHECK(testing::count_of(read_text(out / "logs" / (id + ".log")), "started") == 1);
      // Written before its record: an FP8 run recorded before the kill has its sidecar, untouched.
      REQUIRE(sidecars_before.count(id) == 1);
      CHECK(read_text(sidecar_of(results, id)) == sidecars_before[id].first);
      CHECK(fs::last_write_time(sidecar_of(results, id)) == sidecars_before[id].second);
    }
  }
  for (const auto& id : after) {
    const auto text = read_text(results.run_record_path(id));
    INFO(id << ": " << text.substr(0, 300));
    CHECK(text.find("\"status\":\"finished\"") != std::string::npos);
    if (id.rfind("baseline-", 0) != 0) CHECK(fs::is_regular_file(sidecar_of(results, id)));
  }
  CHECK(fs::exists(out / "report.html"));
}

}  // namespace fp8lab::experiments
