// Two `fp8lab sweep` processes on one --out (issue 13, data integrity; directory_lock.hpp):
// overlapping shard specs run every run exactly once between them, a second sweep of the same
// shard is refused naming the holder, and a holder killed with SIGKILL leaves no lock behind.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "experiments/results/results_store.hpp"
#include "experiments/sweep/child_process.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/run_processes.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::count_of;
using testing::eventually;
using testing::read_text;
using testing::run_to_end;
using testing::wait_exit;

// 4 distinct runs of mlp beside one baseline.
struct Setup : testing::MlpSweep {
  explicit Setup(const std::string& name) : MlpSweep(name, FP8LAB_EXECUTABLE, "0, 1, 2, 3") {}
};

// Every run's log says it started exactly once, and every run has a valid record.
void check_each_run_ran_once(const fs::path& out) {
  const auto ids = ResultsDirectory(out).recorded_run_ids();
  CHECK(ids.size() == 5);
  for (const auto& id : ids) {
    INFO(id);
    CHECK(count_of(read_text(out / "logs" / (id + ".log")), "fp8lab run " + id + ": started") == 1);
  }
}

}  // namespace

TEST_CASE("Overlapping shards on one --out run every run exactly once", "[integrity][lock]") {
  const Setup s("lock-overlap");
  // Started together: 0/1 takes every run, 0/2 every other one; both need the one baseline.
  const pid_t all = start_child(s.sweep_with({"--resume", "--jobs", "2"}), s.dir / "all.log");
  const pid_t half = start_child(s.sweep_with({"--resume", "--shard", "0/2"}), s.dir / "half.log");
  CHECK(wait_exit(all) == 0);
  CHECK(wait_exit(half) == 0);
  const auto all_log = read_text(s.dir / "all.log"), half_log = read_text(s.dir / "half.log");
  INFO("0/1:\n" << all_log << "\n0/2:\n" << half_log);
  check_each_run_ran_once(s.out);
  CHECK(fs::is_empty(s.out / "claims"));  // every claim released and removed
}

TEST_CASE("A second sweep of the same shard is refused while the first runs; kill -9 frees it",
          "[integrity][lock]") {
  const Setup s("lock-refused");
  const auto lock = s.out / ".lock-0-of-1";
  // This test holds the baseline's claim, as an overlapping sweep running it would: the first
  // sweep waits for it, so it is still running at the refusal and at the kill (its five two-step
  // runs could otherwise all finish first).
  const auto claim = s.out / "claims" / s.kBaseline;
  fs::create_directories(claim.parent_path());
  const int claim_fd = ::open(claim.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(claim_fd >= 0);
  REQUIRE(::flock(claim_fd, LOCK_EX) == 0);
  const pid_t first = start_child(s.sweep, s.dir / "first.log");
  const std::string holder = "pid " + std::to_string(first) + " on host ";
  REQUIRE(eventually([&] { return read_text(lock).find(holder) != std::string::npos; }));

  CHECK(run_to_end(s.sweep_with({"--resume"}), s.dir / "second.log") == 2);
  const auto second = read_text(s.dir / "second.log");
  CHECK_THAT(
      second,
      Catch::Contains(s.out.string() + " is already being swept as shard 0/1 by " + holder) &&
          Catch::Contains("fp8lab sweep shard 0/1") && Catch::Contains("lock " + lock.string()));

  // SIGKILL: no chance to clean up. The kernel drops its flocks; its children die with it.
  ::kill(first, SIGKILL);
  CHECK(wait_exit(first) == 128 + SIGKILL);
  ::close(claim_fd);
  CHECK(read_text(lock).find(holder) != std::string::npos);  // the stale text stays...
  REQUIRE(run_to_end(s.sweep_with({"--resume"}), s.dir / "resumed.log") == 0);  // ...harmless
  CHECK_THAT(read_text(lock), !Catch::Contains(holder));
  const auto ids = ResultsDirectory(s.out).recorded_run_ids();
  CHECK(ids.size() == 5);
}

TEST_CASE("A sweep that fails while runs are running stops and reaps them before it exits",
          "[integrity][lock]") {
  const testing::Scratch dir("lock-fails");
  // Two FP8 runs at once, each long (2000 steps of gpt-tiny) so that both are caught running.
  std::ofstream(dir / "sweep.yaml") << "method: grid\nworkloads: [gpt-tiny]\nseeds: [0]\n"
                                       "parameters:\n  fp8_format: {values: [E4M3, HYBRID]}\n";
  const auto out = dir / "out";
  // As subreaper, this test inherits a run the sweep leaves behind: then waitpid finds it.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t sweep = start_child({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(),
                                   "--out", out.string(), "--steps", "2000", "--jobs", "2"},
                                  dir / "sweep.log");
  std::vector<std::pair<std::string, pid_t>> runs;
  const bool both_running = eventually([&] {
    runs.clear();
    if (!fs::exists(out / "logs")) return false;
    for (const auto& log : fs::directory_iterator(out / "logs")) {
      const std::string id = log.path().stem();
      if (id.rfind("baseline-", 0) == 0) continue;
      if (const pid_t pid = testing::pid_of_run(id)) runs.emplace_back(id, pid);
    }
    return runs.size() == 2;
  });
  REQUIRE(both_running);
  // The first run dies without a record, and its record cannot be written (a directory holds the
  // path): write_run_record throws inside the sweep while the second run still runs.
  fs::create_directories(out / "runs" / (runs[0].first + ".json") / "in-the-way");
  ::kill(runs[0].second, SIGKILL);
  CHECK(wait_exit(sweep) == 2);
  INFO(read_text(dir / "sweep.log"));
  CHECK_THAT(read_text(dir / "sweep.log"), Catch::Contains("fp8lab sweep: "));
  // The sweep stopped and reaped the second run itself: it is no orphan of this test's.
  errno = 0;
  CHECK(::waitpid(runs[1].second, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_CASE("A sweep checks and writes sweep.json under DIR/.lock-sweep, waiting for its holder",
          "[integrity][lock]") {
  const Setup s("lock-sweep-file");
  fs::create_directories(s.out);
  // This test holds the lock, as another sweep checking sweep.json would.
  const int fd = ::open((s.out / ".lock-sweep").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  const pid_t sweep = start_child(s.sweep, s.dir / "sweep.log");
  const std::string holder = "pid " + std::to_string(sweep) + " on host ";
  // The shard lock is taken just before: from then on the sweep waits for .lock-sweep.
  REQUIRE(eventually(
      [&] { return read_text(s.out / ".lock-0-of-1").find(holder) != std::string::npos; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK_FALSE(fs::exists(s.out / "sweep.json"));
  ::close(fd);
  CHECK(wait_exit(sweep) == 0);
  CHECK(fs::exists(s.out / "sweep.json"));
}

}  // namespace fp8lab::experiments
