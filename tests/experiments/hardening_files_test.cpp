// Only regular files are read (issue 33, item 5): a FIFO, a socket or a directory where fp8lab
// expects a file of a results directory (a run record, sweep.json, a claim, a sidecar) is named,
// with exit 2, at once: a FIFO named runs/x.json used to make `fp8lab report` wait forever. Each
// check drives the fp8lab executable; the reader itself is tested first, directly.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/results/no_follow.hpp"
#include "experiments/results/results_store.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_to_end;
using testing::Scratch;

void make_fifo(const fs::path& path) {
  fs::create_directories(path.parent_path());
  REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
}

// A bound Unix socket at `path` (the descriptor stays open until the test ends).
int make_socket(const fs::path& path) {
  fs::create_directories(path.parent_path());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(path.string().size() < sizeof address.sun_path);
  std::strcpy(address.sun_path, path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  return fd;
}

const std::string kSweep = "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                           "parameters:\n  margin: {values: [0]}\n";

}  // namespace

TEST_CASE("The reader names a FIFO, a socket, a directory and a link, and reads a regular file",
          "[hardening][files]") {
  const Scratch dir("files-reader");
  std::ofstream(dir / "file.json") << "{}\n";
  CHECK(read_regular_file(dir / "file.json") == std::optional<std::string>("{}\n"));
  CHECK_FALSE(read_regular_file(dir / "absent.json").has_value());
  make_fifo(dir / "fifo.json");
  CHECK_THROWS_WITH(read_regular_file(dir / "fifo.json"),
                    Catch::Contains((dir / "fifo.json").string() + " is a FIFO (named pipe), not "
                                                                   "a regular file"));
  const int listener = make_socket(dir / "socket.json");
  CHECK_THROWS_WITH(read_regular_file(dir / "socket.json"),
                    Catch::Contains((dir / "socket.json").string() + " is a socket"));
  ::close(listener);
  fs::create_directories(dir / "directory.json");
  CHECK_THROWS_WITH(read_regular_file(dir / "directory.json"),
                    Catch::Contains((dir / "directory.json").string() + " is a directory"));
  CHECK_THROWS_WITH(read_regular_file("/dev/null"), Catch::Contains("is a character device"));
  fs::create_symlink(dir / "file.json", dir / "link.json");
  CHECK_THROWS_WITH(read_regular_file(dir / "link.json"),
                    Catch::Contains((dir / "link.json").string() + " is a symbolic link (to " +
                                    (dir / "file.json").string() + ")"));
  // A run record file as --resume and report read it.
  CHECK_THROWS_AS(read_run_record_file(dir / "fifo.json"), NotARegularFile);
}

TEST_CASE("fp8lab report on a directory with a FIFO runs/x.json names it and exits 2 at once",
          "[hardening][files]") {
  const Scratch dir("files-report");
  fs::create_directories(dir / "out" / "runs");
  make_fifo(dir / "out" / "runs" / "x.json");
  const auto log = dir / "report.log";
  // Before issue 33 this never returned (the ctest TIMEOUT would end it).
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", (dir / "out").string()}, log) == 2);
  CHECK_THAT(read_text(log), Catch::Contains((dir / "out" / "runs" / "x.json").string() +
                                             " is a FIFO (named pipe), not a regular file"));
}

TEST_CASE("fp8lab sweep names a FIFO, socket or directory in place of its files and exits 2",
          "[hardening][files]") {
  const Scratch dir("files-sweep");
  std::ofstream(dir / "sweep.yaml") << kSweep;
  const auto out = dir / "out";
  const std::vector<std::string> sweep = {
      FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out", out.string(),
      "--steps",         "2"};
  const std::string baseline = "baseline-mlp-seed0-fp32-steps2";
  struct Planted {
    fs::path path;
    std::string kind;
  };
  int listener = -1;
  for (const auto& [path, kind] :
       {Planted{out / "sweep.json", "FIFO"}, Planted{out / "runs" / (baseline + ".json"), "FIFO"},
        Planted{out / "claims" / baseline, "FIFO"},
        Planted{out / "logs" / (baseline + ".log"), "socket"},
        Planted{out / "runs" / (baseline + ".json"), "directory"}}) {
    INFO(path << " as a " << kind);
    fs::remove_all(out);
    if (kind == "FIFO") make_fifo(path);
    if (kind == "socket") listener = make_socket(path);
    if (kind == "directory") fs::create_directories(path);
    const auto log = dir / "sweep.log";
    fs::remove(log);
    auto arguments = sweep;
    if (path.filename() == "sweep.json" || path.parent_path().filename() == "runs") {
      arguments.push_back("--resume");  // the directory holds "records": --resume reads them
    }
    CHECK(run_to_end(arguments, log) == 2);
    CHECK_THAT(read_text(log), Catch::Contains(path.string() + " is a " + kind));
    if (listener >= 0) ::close(listener);
    listener = -1;
  }
}

TEST_CASE("fp8lab report names a FIFO in place of a run's layer statistics sidecar in the report",
          "[hardening][files]") {
  const Scratch dir("files-sidecar");
  std::ofstream(dir / "sweep.yaml") << kSweep;
  const auto out = dir / "out";
  REQUIRE(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--out",
                      out.string(), "--steps", "2"},
                     dir / "sweep.log") == 0);
  fs::path sidecar;
  for (const auto& entry : fs::directory_iterator(out / "layer_stats")) {
    if (entry.path().filename().string().rfind("baseline-", 0) != 0) sidecar = entry.path();
  }
  REQUIRE_FALSE(sidecar.empty());
  fs::remove(sidecar);
  make_fifo(sidecar);
  // As a corrupt sidecar is: named in the report, which finishes at once.
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "report", out.string()}, dir / "report.log") == 0);
  CHECK_THAT(read_text(out / "report.md"), Catch::Contains(sidecar.string() + " is a FIFO"));
}

}  // namespace fp8lab::experiments
