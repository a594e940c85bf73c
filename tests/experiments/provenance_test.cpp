// Issue #13 item 3 and the run side of item 5, through the fp8lab command: every run record (a
// single run from an accelerate config, from --env, as asked and as upstream, a baseline, a
// sweep's runs) says which build ran it, where its settings came from with their text, how it ran
// them and what the peer would change; --version prints the build; a sweep whose stderr is a file
// logs one progress line per finished run; a sweep's run reads its job, not the sweep file (issue
// 17). Tiny runs: the mlp workload, 2 steps.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/results/results_store.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/run/run_ids.hpp"
#include "experiments/sweep/child_process.hpp"
#include "experiments/sweep/run_job.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_json;
using testing::read_text;
using testing::run_to_end;
using testing::Scratch;

// The one FP8 record (kind "fp8") and the baseline record of an output directory.
nlohmann::json record_of_kind(const fs::path& out, const std::string& kind) {
  nlohmann::json found;
  for (auto& [id, record] : testing::records(out)) {
    if (record["kind"] == kind) {
      REQUIRE(found.is_null());  // exactly one
      found = std::move(record);
    }
  }
  REQUIRE(found.is_object());
  return found;
}

// Removes every ACCELERATE_FP8_* variable from this process (the children inherit it).
void clear_accelerate_env() {
  std::vector<std::string> names;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string assignment(*entry);
    if (assignment.rfind("ACCELERATE_FP8_", 0) == 0) {
      names.push_back(assignment.substr(0, assignment.find('=')));
    }
  }
  for (const auto& name : names) ::unsetenv(name.c_str());
}

std::string version_commit(const fs::path& dir) {
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "--version"}, dir / "version.log") == 0);
  const std::string text = read_text(dir / "version.log");
  std::smatch m;
  const std::regex version(R"(fp8lab 0\.1\.0 \(git ([0-9a-f]{40}|unknown)(, dirty)?\)\n)");
  REQUIRE(std::regex_match(text, m, version));
  return m[1];
}

void check_build_fields(const nlohmann::json& record, const std::string& commit) {
  CHECK(record["fp8lab_version"] == "0.1.0");
  CHECK(record["git_commit"] == commit);
  CHECK(
      (record["git_dirty"].is_boolean() || (commit == "unknown" && record["git_dirty"].is_null())));
}

}  // namespace

TEST_CASE("fp8lab --version prints the build every record stores", "[provenance]") {
  const Scratch dir("version");
  const std::string commit = version_commit(dir);
  // FP8LAB_SOURCE_DIR is a checkout in CI: the commit is known there.
  if (fs::exists(fs::path(FP8LAB_SOURCE_DIR) / ".git")) CHECK(commit != "unknown");
}

TEST_CASE("Runs from an accelerate config record source, mode, changes and the peer's view",
          "[provenance]") {
  const Scratch dir("provenance-config");
  const std::string commit = version_commit(dir);
  // accelerate's default TE recipe, plus the key `accelerate config` writes and accelerate never
  // reads (te-accelerate.md §1.7).
  const std::string config =
      "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_length: 16\n";
  std::ofstream(dir / "accelerate.yaml") << config;

  const auto asked = dir / "asked";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--steps", "2", "--recipe",
                      (dir / "accelerate.yaml").string(), "--out", asked.string()},
                     dir / "asked.log") == 0);
  const auto fp8 = record_of_kind(asked, "fp8");
  check_build_fields(fp8, commit);
  CHECK(fp8["source"]["kind"] == "accelerate_config");
  CHECK(fp8["source"]["path"] == (dir / "accelerate.yaml").string());
  CHECK(fp8["source"]["text"] == config);
  CHECK(fp8["runs_as"] == "asked");
  CHECK(fp8["changed_fields"] == nlohmann::json::array());
  const auto& upstream = fp8["upstream"];
  CHECK(upstream["runner"] == "accelerate + Transformer Engine");
  CHECK(upstream["runnable"] == true);
  CHECK(upstream["trains_fp8"] == true);
  CHECK(upstream["refusal"].is_null());
  REQUIRE(upstream["would_change"].size() == 1);
  CHECK(upstream["would_change"][0]["field"] == "amax_compute_algo");
  CHECK(upstream["would_change"][0]["asked"] == "most_recent");
  CHECK(upstream["would_change"][0]["runs"] == "max");
  CHECK(upstream["would_change"][0]["reference"] == "te-accelerate.md §1.2");
  bool key_bug = false;  // the ignored key is among the quirks, though it changes no field
  for (const auto& q : upstream["quirks"]) {
    key_bug = key_bug || (q["field"] == "fp8_config.amax_history_length" && q["runs"] == "ignored");
  }
  CHECK(key_bug);
  // ... and the run says so in its output.
  CHECK_THAT(read_text(dir / "asked.log"),
             Catch::Contains("fp8lab run: note: fp8_config.amax_history_length '16' is ignored: "));

  const auto baseline = record_of_kind(asked, "baseline");
  check_build_fields(baseline, commit);
  CHECK(baseline["source"]["kind"] == "baseline");
  CHECK(baseline["source"]["path"].is_null());
  CHECK(baseline["runs_as"] == "asked");
  CHECK(baseline["changed_fields"] == nlohmann::json::array());
  CHECK(baseline["upstream"].is_null());

  const auto as_upstream = dir / "upstream";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--steps", "2", "--recipe",
                      (dir / "accelerate.yaml").string(), "--as", "upstream", "--out",
                      as_upstream.string()},
                     dir / "upstream.log") == 0);
  const auto te = record_of_kind(as_upstream, "fp8");
  CHECK(te["runs_as"] == "upstream");
  CHECK(te["recipe"]["amax_compute_algo"] == "max");
  REQUIRE(te["changed_fields"].size() == 1);
  CHECK(te["changed_fields"][0] == upstream["would_change"][0]);
  CHECK(te["upstream"]["would_change"] == nlohmann::json::array());
  CHECK(te["upstream"]["refusal"].is_null());
  CHECK(te["source"]["text"] == config);
  CHECK(te["run_id"] != fp8["run_id"]);
}

TEST_CASE("fp8lab run --env runs accelerate's ACCELERATE_FP8_* variables, no config file",
          "[provenance][ergonomics]") {
  const Scratch dir("provenance-env");
  clear_accelerate_env();
  // None set: a clear error naming what is accepted, nothing run.
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--steps", "2", "--env", "--out",
                    (dir / "none").string()},
                   dir / "none.log") == 2);
  const std::string none = read_text(dir / "none.log");
  CHECK_THAT(none, Catch::StartsWith("fp8lab run: environment: ACCELERATE_FP8_*: no variable is "
                                     "set") &&
                       Catch::Contains("ACCELERATE_FP8_AMAX_HISTORY_LEN") &&
                       Catch::Contains("ACCELERATE_FP8_FORMAT"));
  CHECK_FALSE(fs::exists(dir / "none" / "runs"));
  // --env with --recipe: refused by the command line.
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--env", "--set", "margin=1"},
                   dir / "both.log") != 0);
  CHECK_THAT(read_text(dir / "both.log"), Catch::Contains("excludes"));

  ::setenv("ACCELERATE_FP8_FORMAT", "E4M3", 1);
  ::setenv("ACCELERATE_FP8_AMAX_HISTORY_LEN", "16", 1);
  for (const std::string mode : {"asked", "upstream"}) {
    const auto out = dir / mode;
    REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--steps", "2", "--env",
                        "--as", mode, "--out", out.string()},
                       dir / (mode + ".log")) == 0);
    const auto record = record_of_kind(out, "fp8");
    CHECK(record["source"]["kind"] == "accelerate_env");
    CHECK(record["source"]["path"].is_null());
    CHECK(record["source"]["text"] ==
          "ACCELERATE_FP8_AMAX_HISTORY_LEN=16\nACCELERATE_FP8_FORMAT=E4M3\n");
    CHECK(record["recipe"]["fp8_format"] == "E4M3");
    CHECK(record["recipe"]["amax_history_len"] == "16");
    CHECK(record["runs_as"] == mode);
    CHECK(record["recipe"]["amax_compute_algo"] == (mode == "asked" ? "most_recent" : "max"));
    CHECK(record["changed_fields"].size() == (mode == "asked" ? 0u : 1u));
  }
  clear_accelerate_env();
}

TEST_CASE("mixed_precision bf16 + fp8_config: explain says no FP8, run --as upstream refuses",
          "[provenance][ergonomics]") {
  const Scratch dir("provenance-bf16");
  std::ofstream(dir / "bf16.yaml") << "mixed_precision: bf16\nfp8_config:\n  backend: TE\n";
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "explain", (dir / "bf16.yaml").string()},
                   dir / "explain.log") == 0);
  CHECK_THAT(read_text(dir / "explain.log"),
             Catch::Contains("runs: NO FP8 (mixed_precision: bf16") &&
                 Catch::Contains("fp8lab run --as upstream refuses this config"));
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--steps", "2", "--recipe",
                    (dir / "bf16.yaml").string(), "--as", "upstream", "--out",
                    (dir / "upstream").string()},
                   dir / "upstream.log") == 2);
  CHECK_THAT(read_text(dir / "upstream.log"),
             Catch::Contains("mixed_precision: accelerate + Transformer Engine runs no FP8 for "
                             "mixed_precision bf16") &&
                 Catch::Contains("--baseline-only --baseline-precision bf16"));
  CHECK_FALSE(fs::exists(dir / "upstream" / "runs"));
  // As asked, the fp8_config runs as written, and the record says accelerate would train no FP8.
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--steps", "2", "--recipe",
                      (dir / "bf16.yaml").string(), "--out", (dir / "asked").string()},
                     dir / "asked.log") == 0);
  CHECK_THAT(read_text(dir / "asked.log"),
             Catch::Contains("fp8lab run: note: runs as asked, but accelerate + Transformer Engine "
                             "runs no FP8 for mixed_precision bf16"));
  const auto record = record_of_kind(dir / "asked", "fp8");
  CHECK(record["upstream"]["trains_fp8"] == false);
  CHECK(record["upstream"]["runnable"] == false);
  CHECK(record["upstream"]["would_change"] == nlohmann::json::array());
  CHECK_THAT(record["upstream"]["refusal"].get<std::string>(), Catch::Contains("runs no FP8"));
}

TEST_CASE("Sweep runs record the sweep, their combinations and upstream's changes per request; "
          "the log has one progress line per finished run",
          "[provenance][progress]") {
  const Scratch dir("provenance-sweep");
  // Upstream: TE never gets most_recent, so both combinations run max: one run standing for two.
  const std::string text =
      "runs_as: upstream\nworkloads: [mlp]\nseeds: [0]\nparameters:\n"
      "  amax_history_len: {value: 16}\n  amax_compute_algo: {values: [max, most_recent]}\n";
  std::ofstream(dir / "sweep.yaml") << text;
  const auto out = dir / "out";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out",
                      out.string(), "--steps", "2", "--jobs", "1"},
                     dir / "sweep.log") == 0);
  const auto record = record_of_kind(out, "fp8");
  const auto& source = record["source"];
  CHECK(source["kind"] == "sweep");
  CHECK(source["path"] == (dir / "sweep.yaml").string());
  CHECK(source["text"] == text);
  CHECK(source["combinations"] ==
        nlohmann::json::array({"amax_history_len=16 amax_compute_algo=max",
                               "amax_history_len=16 amax_compute_algo=most_recent"}));
  CHECK(source["request_indices"] == nlohmann::json::array({1, 2}));
  // The labels are sweep.json's.
  const auto sweep = read_json(out / "sweep.json");
  CHECK(sweep["requested"][1]["label"] == source["combinations"][1]);
  CHECK(record["runs_as"] == "upstream");
  REQUIRE(record["changed_fields"].size() == 1);
  const auto& change = record["changed_fields"][0];
  CHECK(change["field"] == "amax_compute_algo");
  CHECK(change["asked"] == "most_recent");
  CHECK(change["runs"] == "max");
  CHECK(change["combinations"] ==
        nlohmann::json::array({"amax_history_len=16 amax_compute_algo=most_recent"}));
  CHECK(record["upstream"]["would_change"] == nlohmann::json::array());

  // stderr is a file: one line per finished run, baseline first, then the FP8 run, then done.
  const std::string log = read_text(dir / "sweep.log");
  INFO(log);
  const std::string id = record["run_id"];
  CHECK(std::regex_search(log, std::regex(R"(\[1/2\] baseline-mlp-seed0-fp32-steps2 baseline )"
                                          R"(finished in \d+(m\d\ds)?s? \(eval loss [0-9.e+-]+\) )"
                                          R"(\| 0 running, ETA \d)")));
  CHECK(std::regex_search(log, std::regex(R"(\[2/2\] )" + id +
                                          R"( delayed HYBRID m0 h16 max )"
                                          R"(finished in \d+s \(eval rel diff [+-]\d+\.\d\d%\) )"
                                          R"(\| all done in \d+)")));
  CHECK(log.find('\r') == std::string::npos);
}

// A sweep run whose process is killed has no record since issue 33 (an error, not a result:
// experiments/sweep/run_errors.hpp); tests/experiments/faults_test.cpp kills each run in turn.

// Issue 17 item 4: the process of a sweep's run gets its run from the sweep (run_job.hpp), and
// never reads the sweep file: handed the same job with the sweep file deleted, it writes the record
// the sweep's own run wrote (same id, recipe, provenance).
TEST_CASE("A sweep run's process runs the job the sweep hands it, without the sweep file",
          "[provenance][job]") {
  const Scratch dir("provenance-job");
  const std::string text =
      "runs_as: upstream\nworkloads: [mlp]\nseeds: [0]\nparameters:\n"
      "  amax_history_len: {value: 16}\n  amax_compute_algo: {values: [max, most_recent]}\n";
  const auto sweep_file = dir / "sweep.yaml";
  std::ofstream(sweep_file) << text;
  const auto swept = dir / "swept";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "sweep", sweep_file.string(), "--out", swept.string(),
                      "--steps", "2"},
                     dir / "sweep.log") == 0);
  const auto reference = record_of_kind(swept, "fp8");
  // Each job file goes once its process has exited.
  CHECK((!fs::exists(swept / "jobs") || fs::is_empty(swept / "jobs")));

  // The job as the sweep writes it (sweep_plan.cpp), then no sweep file at all.
  const auto expansion = recipes::expand(recipes::parse_sweep_text(text, sweep_file.string()));
  REQUIRE(expansion.runs.size() == 1);
  const auto& run = expansion.runs[0];
  RunRequest request;
  request.workload = run.workload;
  request.seed = run.seed;
  request.recipe = run.recipe;
  request.steps = 2;
  // As the sweep files it under --steps 2 (run_ids.hpp).
  request.run_id = fp8_run_id(run.id, request.steps, request.backend);
  request.provenance = sweep_run_provenance(expansion, run, text);
  const auto out = dir / "job";
  const auto job = run_job_path(ResultsDirectory(out), request.run_id);
  write_run_job(ResultsDirectory(out), request);
  fs::remove(sweep_file);
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "run", "--job", job.string(), "--run-id", request.run_id,
                      "--out", out.string(), "--steps", "2"},
                     dir / "job.log") == 0);
  const auto record = record_of_kind(out, "fp8");
  INFO(record.dump());
  CHECK(record["status"] == "finished");
  for (const char* key :
       {"run_id", "workload", "seed", "recipe", "recipe_fields", "recipe_canonical", "recipe_label",
        "baseline_run_id", "source", "runs_as", "changed_fields", "upstream"}) {
    INFO(key);
    CHECK(record[key] == reference[key]);
  }
  CHECK(record["source"]["text"] == text);

  // A job that is not the run asked for is refused, naming both.
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "run", "--job", job.string(), "--run-id", "0123abcd",
                    "--out", out.string(), "--steps", "2"},
                   dir / "wrong.log") == 2);
  CHECK_THAT(read_text(dir / "wrong.log"),
             Catch::Contains("holds run " + run.id) && Catch::Contains("not --run-id 0123abcd"));
}

}  // namespace fp8lab::experiments
