// No writes through planted links (issue 19, item 1). A results directory may be shared: someone
// who can write into it plants a symbolic link where the sweep creates a file (a lock, a claim, a
// log) pointing at a file of the user running the sweep. The sweep must refuse it, naming the
// link, with exit 2, and leave the link's target as it was.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_to_end;

const std::string kVictimText = "the user's own file: must stay as it is\n";

// The sweep's directory, --out made, and a file of the user's outside --out: the victim.
struct Planted : testing::MlpSweep {
  explicit Planted(const std::string& name)
      : MlpSweep("links-" + name, FP8LAB_EXECUTABLE, "0, 1"), victim(dir / "victim.txt") {
    fs::create_directories(out);
    testing::write_text(victim, kVictimText);
  }
  // Makes OUT/<name> a link to a new directory of the user's outside --out, and returns that.
  fs::path link_elsewhere(const std::string& name) const {
    const auto elsewhere = dir / "users-directory";
    fs::create_directories(elsewhere);
    fs::create_directory_symlink(elsewhere, out / name);
    return elsewhere;
  }
  fs::path victim;
};

// Plants `link` -> the victim, runs the sweep, and checks the refusal.
void check_refused(const Planted& p, const fs::path& link, const fs::path& named) {
  INFO("planted " << link);
  fs::create_directories(link.parent_path());
  fs::create_symlink(p.victim, link);
  const auto log = p.dir / "sweep.log";
  CHECK(run_to_end(p.sweep, log) == 2);
  const auto text = read_text(log);
  INFO(text);
  CHECK_THAT(text, Catch::Contains(named.string() + " is a symbolic link (to " + p.victim.string() +
                                   ")") &&
                       Catch::Contains("never writes through a link"));
  CHECK(read_text(p.victim) == kVictimText);
  CHECK(fs::is_symlink(link));
}

}  // namespace

TEST_CASE("A planted link at a lock, claim or log is refused and its target left alone",
          "[hardening][links]") {
  SECTION("the shard lock DIR/.lock-0-of-1") {
    const Planted p("shard");
    check_refused(p, p.out / ".lock-0-of-1", p.out / ".lock-0-of-1");
  }
  SECTION("the sweep-file lock DIR/.lock-sweep") {
    const Planted p("sweep");
    check_refused(p, p.out / ".lock-sweep", p.out / ".lock-sweep");
  }
  SECTION("a run's claim DIR/claims/<id>") {
    const Planted p("claim");
    check_refused(p, p.out / "claims" / p.kBaseline, p.out / "claims" / p.kBaseline);
  }
  SECTION("a run's log DIR/logs/<id>.log (appended to, before)") {
    const Planted p("log");
    check_refused(p, p.out / "logs" / (p.kBaseline + ".log"),
                  p.out / "logs" / (p.kBaseline + ".log"));
  }
}

TEST_CASE("A planted link in place of any directory under --out is refused, nothing written "
          "outside --out",
          "[hardening][links]") {
  // One link rule (issue 33, item 6): every directory fp8lab creates or reads under --out is
  // opened relative to --out's descriptor without following a link.
  for (const char* name : {"claims", "logs", "runs", "baselines", "layer_stats", "jobs"}) {
    const Planted p(std::string("dir-") + name);
    INFO(name);
    // The link points at a directory of the user's: new files would land there.
    const auto elsewhere = p.link_elsewhere(name);
    const auto log = p.dir / "sweep.log";
    CHECK(run_to_end(p.sweep, log) == 2);
    const auto text = read_text(log);
    INFO(text);
    CHECK_THAT(text, Catch::Contains((p.out / name).string() + " is a symbolic link (to " +
                                     elsewhere.string() + ")"));
    CHECK(fs::is_empty(elsewhere));
    // `fp8lab report` reads through none either (runs/, baselines/, layer_stats/).
    if (std::string(name) == "runs" || std::string(name) == "baselines" ||
        std::string(name) == "layer_stats") {
      fs::create_directories(elsewhere / "inside");
      const auto report_log = p.dir / "report.log";
      CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", p.out.string()}, report_log) == 2);
      CHECK_THAT(read_text(report_log),
                 Catch::Contains((p.out / name).string() + " is a symbolic link (to " +
                                 elsewhere.string() + ")"));
    }
  }
}

TEST_CASE("fp8lab run refuses a planted link in place of runs/ or baselines/ before training",
          "[hardening][links]") {
  for (const char* name : {"runs", "baselines"}) {
    const Planted p(std::string("run-") + name);
    INFO(name);
    const auto elsewhere = p.link_elsewhere(name);
    const auto log = p.dir / "run.log";
    CHECK(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--set", "margin=0", "--steps",
                      "2", "--out", p.out.string()},
                     log) == 2);
    CHECK_THAT(read_text(log), Catch::Contains((p.out / name).string() + " is a symbolic link"));
    CHECK(fs::is_empty(elsewhere));
  }
}

TEST_CASE("Without planted links the sweep runs, and --out may itself be a link the user chose",
          "[hardening][links]") {
  const Planted p("none");
  const auto chosen = p.dir / "out-link";
  fs::create_directory_symlink(p.out, chosen);
  auto sweep = p.sweep;
  sweep[4] = chosen.string();
  const auto log = p.dir / "sweep.log";
  CHECK(run_to_end(sweep, log) == 0);
  INFO(read_text(log));
  CHECK(fs::exists(p.out / "runs" / (p.kBaseline + ".json")));
  // No temp file is left behind by the atomic writes.
  for (const auto& entry : fs::recursive_directory_iterator(p.out)) {
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

}  // namespace fp8lab::experiments
