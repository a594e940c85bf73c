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

#include "tests/support/read_text.hpp"
#include "tests/support/run_to_end.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_to_end;

const std::string kVictimText = "the user's own file: must stay as it is\n";
const std::string kBaseline = "baseline-mlp-seed0-fp32-steps2";

struct Planted {
  fs::path dir, out, victim;
  std::vector<std::string> sweep;  // fp8lab sweep FILE --out OUT --steps 2
};

Planted setup(const std::string& name) {
  Planted p;
  p.dir = fs::temp_directory_path() / ("fp8lab-links-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p.dir);
  fs::create_directories(p.dir);
  std::ofstream(p.dir / "sweep.yaml") << "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                                         "parameters:\n  margin: {values: [0, 1]}\n";
  p.out = p.dir / "out";
  fs::create_directories(p.out);
  p.victim = p.dir / "victim.txt";  // outside --out
  std::ofstream(p.victim) << kVictimText;
  p.sweep = {FP8LAB_EXECUTABLE, "sweep", (p.dir / "sweep.yaml").string(), "--out", p.out.string(),
             "--steps",         "2"};
  return p;
}

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
    const auto p = setup("shard");
    check_refused(p, p.out / ".lock-0-of-1", p.out / ".lock-0-of-1");
    fs::remove_all(p.dir);
  }
  SECTION("the sweep-file lock DIR/.lock-sweep") {
    const auto p = setup("sweep");
    check_refused(p, p.out / ".lock-sweep", p.out / ".lock-sweep");
    fs::remove_all(p.dir);
  }
  SECTION("a run's claim DIR/claims/<id>") {
    const auto p = setup("claim");
    check_refused(p, p.out / "claims" / kBaseline, p.out / "claims" / kBaseline);
    fs::remove_all(p.dir);
  }
  SECTION("a run's log DIR/logs/<id>.log (appended to, before)") {
    const auto p = setup("log");
    check_refused(p, p.out / "logs" / (kBaseline + ".log"), p.out / "logs" / (kBaseline + ".log"));
    fs::remove_all(p.dir);
  }
}

TEST_CASE("A planted link in place of any directory under --out is refused, nothing written "
          "outside --out",
          "[hardening][links]") {
  // One link rule (issue 33, item 6): every directory fp8lab creates or reads under --out is
  // opened relative to --out's descriptor without following a link.
  for (const char* name : {"claims", "logs", "runs", "baselines", "layer_stats", "jobs"}) {
    const auto p = setup(std::string("dir-") + name);
    INFO(name);
    // The link points at a directory of the user's: new files would land there.
    const auto elsewhere = p.dir / "users-directory";
    fs::create_directories(elsewhere);
    fs::create_directory_symlink(elsewhere, p.out / name);
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
    fs::remove_all(p.dir);
  }
}

TEST_CASE("fp8lab run refuses a planted link in place of runs/ or baselines/ before training",
          "[hardening][links]") {
  for (const char* name : {"runs", "baselines"}) {
    const auto p = setup(std::string("run-") + name);
    INFO(name);
    const auto elsewhere = p.dir / "users-directory";
    fs::create_directories(elsewhere);
    fs::create_directory_symlink(elsewhere, p.out / name);
    const auto log = p.dir / "run.log";
    CHECK(run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "mlp", "--set", "margin=0", "--steps",
                      "2", "--out", p.out.string()},
                     log) == 2);
    CHECK_THAT(read_text(log), Catch::Contains((p.out / name).string() + " is a symbolic link"));
    CHECK(fs::is_empty(elsewhere));
    fs::remove_all(p.dir);
  }
}

TEST_CASE("Without planted links the sweep runs, and --out may itself be a link the user chose",
          "[hardening][links]") {
  const auto p = setup("none");
  const auto chosen = p.dir / "out-link";
  fs::create_directory_symlink(p.out, chosen);
  auto sweep = p.sweep;
  sweep[4] = chosen.string();
  const auto log = p.dir / "sweep.log";
  CHECK(run_to_end(sweep, log) == 0);
  INFO(read_text(log));
  CHECK(fs::exists(p.out / "runs" / (kBaseline + ".json")));
  // No temp file is left behind by the atomic writes.
  for (const auto& entry : fs::recursive_directory_iterator(p.out)) {
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  }
  fs::remove_all(p.dir);
}

}  // namespace fp8lab::experiments
