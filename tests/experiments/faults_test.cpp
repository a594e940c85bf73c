// Failures of the machine are errors, not results (issue 33, items 1-4;
// experiments/sweep/run_errors.hpp). A small mlp sweep (a baseline and one FP8 run, 2 steps) runs
// with a fault at each of its file writes in turn (FP8LAB_FAULT_WRITE, counted across the sweep and
// its runs' processes) and with each of its run processes killed in turn (FP8LAB_FAULT_KILL_CHILD).
// Each time:
//   1. the fault is an error: no run record says "failed", the errored run has no record and its
//      log under logs/ names the cause, and the report (when written) says the sweep is
//      incomplete;
//   2. the sweep exits 3 and ends with the cause and "rerun with --resume";
//   3. `--resume` then completes it, with records, sidecars and baseline archives equal bit for bit
//      to an uninterrupted sweep's, but for the fields of time, place and speed (kVolatile).
// Then the same on a real full file system (a small tmpfs), where the machine allows mounting.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "experiments/results/io_error.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::plus;
using testing::read_text;
using testing::run_to_end;

// Fields of a record that say when, where and how fast it ran (docs/results-schema.md): they differ
// between two runs of the same thing; every other field must be equal.
const std::vector<std::string> kVolatile = {"finished_at", "started_at", "host", "throughput"};

// What a sweep directory holds, as compared: each record without kVolatile, and the bytes of each
// sidecar and baseline archive.
struct Contents {
  std::map<std::string, nlohmann::json> records;
  std::map<std::string, std::string> files;  // layer_stats/ and baselines/, by relative path
};

Contents contents(const fs::path& out) {
  Contents c;
  c.records = testing::records(out, kVolatile);
  for (const char* sub : {"layer_stats", "baselines"}) {
    if (!fs::is_directory(out / sub)) continue;
    for (const auto& entry : fs::directory_iterator(out / sub)) {
      const auto name = entry.path().filename().string();
      if (name[0] != '.') c.files[std::string(sub) + "/" + name] = read_text(entry.path());
    }
  }
  return c;
}

// Point 3: the same records (but kVolatile) and the same sidecar and archive bytes.
void check_equal(const Contents& got, const Contents& reference) {
  CHECK(got.records.size() == reference.records.size());
  for (const auto& [id, record] : reference.records) {
    INFO("run " << id);
    REQUIRE(got.records.count(id) == 1);
    if (got.records.at(id) != record) {
      const auto patch = nlohmann::json::diff(record, got.records.at(id));
      FAIL("the record differs from the uninterrupted sweep's: " << patch.dump().substr(0, 600));
    }
  }
  CHECK(got.files.size() == reference.files.size());
  for (const auto& [name, bytes] : reference.files) {
    INFO(name);
    REQUIRE(got.files.count(name) == 1);
    CHECK(got.files.at(name) == bytes);
  }
}

// Points 1 and 2 after a sweep that met a fault whose cause reads `cause`.
void check_errored(const fs::path& out, const std::string& log_text, const Contents& reference,
                   const std::string& cause) {
  // 2: the cause and the way out, last.
  CHECK_THAT(log_text, Catch::Contains(cause) && Catch::Contains("rerun with --resume"));
  // 1: no record of a failure (the fault is not the recipe's); the runs without one are named in
  // their logs, or wait for a baseline that errored.
  const auto got = contents(out);
  for (const auto& [id, record] : got.records) {
    INFO("run " << id << ": " << record.dump().substr(0, 300));
    CHECK(record["status"] == "finished");
  }
  for (const auto& [id, record] : reference.records) {
    if (got.records.count(id) == 1) continue;
    INFO("run " << id << " has no record");
    // In its log under logs/, and on the sweep's stderr (on a full disk the log may not take it).
    const bool logged = read_text(out / "logs" / (id + ".log")).find(" errored (" + cause) !=
                            std::string::npos ||
                        log_text.find("run " + id + " errored (") != std::string::npos;
    const bool waits = log_text.find("run " + id + " waits") != std::string::npos;
    const bool sweep_failed = log_text.find("fp8lab sweep: error (" + cause) != std::string::npos;
    CHECK((logged || waits || sweep_failed));
  }
  // The report, when it was written, says at its top which runs are missing.
  if (got.records.size() < reference.records.size() && fs::exists(out / "report.md")) {
    CHECK_THAT(read_text(out / "report.md"), Catch::Contains("Incomplete sweep"));
  }
}

// A baseline and one FP8 run, one at a time.
struct Sweep : testing::MlpSweep {
  Sweep() : MlpSweep("faults", FP8LAB_EXECUTABLE, "0") {}
  std::vector<std::string> command(const fs::path& into) const {
    return plus(sweep_into(into), {"--jobs", "1"});
  }
};

}  // namespace

TEST_CASE("A fault at each write or run process of a sweep is an error; --resume completes it "
          "bit for bit",
          "[faults]") {
  const Sweep sweep;
  const fs::path& dir = sweep.dir;
  // The uninterrupted sweep, counting its writes.
  const auto count_file = dir / "reference.count";
  {
    const testing::ScopedEnvironment counting(
        {{"FP8LAB_FAULT_WRITE", "1000000:EIO"}, {"FP8LAB_FAULT_COUNT_FILE", count_file.string()}});
    REQUIRE(run_to_end(sweep.command(dir / "reference"), dir / "reference.log") == 0);
  }
  const auto reference = contents(dir / "reference");
  REQUIRE(reference.records.size() == 2);  // the baseline and the FP8 run
  const auto writes = static_cast<int>(fs::file_size(count_file));
  INFO("the sweep writes " << writes << " files");
  REQUIRE(writes >= 8);  // sweep.json, 3 of the baseline, 3 of the run, the reports

  const std::vector<std::pair<std::string, int>> errnos = {{"ENOSPC", ENOSPC},
                                                           {"EDQUOT", EDQUOT},
                                                           {"EIO", EIO}};
  for (int n = 1; n <= writes; ++n) {
    const auto& [name, error] = errnos[static_cast<std::size_t>(n) % errnos.size()];
    const auto out = dir / ("write" + std::to_string(n));
    INFO("write " << n << " of " << writes << " fails with " << name);
    int status = 0;
    {
      const testing::ScopedEnvironment fault(
          {{"FP8LAB_FAULT_WRITE", std::to_string(n) + ":" + name},
           {"FP8LAB_FAULT_COUNT_FILE", (out.string() + ".count")}});
      status = run_to_end(sweep.command(out), out.string() + ".log");
    }
    const auto log_text = read_text(out.string() + ".log");
    INFO(log_text);
    CHECK(status == 3);
    check_errored(out, log_text, reference, errno_cause(error));
    REQUIRE(run_to_end(plus(sweep.command(out), {"--resume"}), out.string() + ".resume.log") == 0);
    INFO(read_text(out.string() + ".resume.log"));
    check_equal(contents(out), reference);
    fs::remove_all(out);
  }

  // Each run process in turn killed with SIGKILL, as the OOM killer kills it.
  for (int k = 1; k <= 2; ++k) {
    const auto out = dir / ("kill" + std::to_string(k));
    INFO("run process " << k << " killed");
    int status = 0;
    {
      const testing::ScopedEnvironment fault({{"FP8LAB_FAULT_KILL_CHILD", std::to_string(k)}});
      status = run_to_end(sweep.command(out), out.string() + ".log");
    }
    const auto log_text = read_text(out.string() + ".log");
    INFO(log_text);
    CHECK(status == 3);
    CHECK_THAT(log_text, Catch::Contains("1 run errored (1 killed by signal 9)"));
    check_errored(out, log_text, reference, "killed by signal 9");
    REQUIRE(run_to_end(plus(sweep.command(out), {"--resume"}), out.string() + ".resume.log") == 0);
    check_equal(contents(out), reference);
  }

  // A run that failed is a result: --resume keeps it, --retry-failed runs it again.
  const auto out = dir / "kill2";
  fs::path fp8_record;
  for (const auto& entry : fs::directory_iterator(out / "runs")) {
    if (entry.path().filename().string().rfind("baseline-", 0) != 0) fp8_record = entry.path();
  }
  auto failed = testing::read_json(fp8_record);
  failed["status"] = "failed";
  failed["error"] = "a failure of the recipe, for the test";
  std::ofstream(fp8_record) << failed.dump() << "\n";
  auto resume = plus(sweep.command(out), {"--resume"});
  CHECK(run_to_end(resume, dir / "keep.log") == 0);
  CHECK(testing::read_json(fp8_record)["status"] == "failed");
  resume.push_back("--retry-failed");
  CHECK(run_to_end(resume, dir / "retry.log") == 0);
  CHECK_THAT(read_text(dir / "retry.log"), Catch::Contains("--retry-failed"));
  check_equal(contents(out), reference);
}

TEST_CASE("fp8lab run exits 3 and records nothing when its write fails", "[faults]") {
  const Sweep sweep;
  const fs::path& dir = sweep.dir;
  int status = 0;
  {
    const testing::ScopedEnvironment fault({{"FP8LAB_FAULT_WRITE", "1:ENOSPC"}});
    status = run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--set", "margin=0",
                         "--steps", "2", "--out", (dir / "out").string()},
                        dir / "run.log");
  }
  const auto log_text = read_text(dir / "run.log");
  INFO(log_text);
  CHECK(status == 3);
  CHECK_THAT(log_text,
             Catch::Contains("fp8lab run: error (no space left on device): cannot write"));
  CHECK(contents(dir / "out").records.empty());
}

TEST_CASE("A sweep on a real full file system exits 3, and --resume completes it once there is "
          "room",
          "[faults][tmpfs]") {
  const Sweep sweep;
  const fs::path& dir = sweep.dir;
  REQUIRE(run_to_end(sweep.command(dir / "reference"), dir / "reference.log") == 0);
  const auto reference = contents(dir / "reference");
  const auto mount_point = dir / "small";
  fs::create_directories(mount_point);
  // Room for the first files, not for the baseline's archive.
  if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=48k") != 0) {
    WARN("skipped: cannot mount a tmpfs here (" << errno_cause(errno)
                                                << "; the test needs root or CAP_SYS_ADMIN)");
    return;
  }
  const auto out = mount_point / "out";
  const int status = run_to_end(sweep.command(out), dir / "full.log");
  const auto log_text = read_text(dir / "full.log");
  INFO(log_text);
  CHECK(status == 3);
  // The cause may not reach a run's log (the disk is full): any cause is accepted here.
  check_errored(out, log_text, reference, "");
  // Room again: --resume completes the sweep.
  REQUIRE(::mount("tmpfs", mount_point.c_str(), "tmpfs", MS_REMOUNT, "size=64m") == 0);
  auto resume = plus(sweep.command(out), {"--resume"});
  CHECK(run_to_end(resume, dir / "resume.log") == 0);
  INFO(read_text(dir / "resume.log"));
  check_equal(contents(out), reference);
  ::umount(mount_point.c_str());
}

}  // namespace fp8lab::experiments
