// What the tests that drive the fp8lab executable or read its results directory share: a scratch
// directory, running a command to its end, waiting for a child, reading text, JSON and the run
// records of an output directory, counting, waiting for a condition, and setting environment
// variables for the children. Each test keeps only what is its own. No LibTorch, no Catch.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/sweep/child_process.hpp"

namespace fp8lab::testing {

// A fresh directory TMP/fp8lab-<name>-<pid> (emptied first: a crashed earlier run may have left
// it), removed when the test ends. The path is fixed by the name, so a failure's messages, which
// name files in it, say where to look while the test runs.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("fp8lab-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  // No throw: a child killed by the test may still be writing into it.
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const std::filesystem::path& path() const { return path_; }
  operator const std::filesystem::path&() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& relative) const {
    return path_ / relative;
  }
  std::string string() const { return path_.string(); }
  friend std::ostream& operator<<(std::ostream& out, const Scratch& scratch) {
    return out << scratch.path_;
  }

 private:
  std::filesystem::path path_;
};

// The exit status of child `pid` once it ends, or 128 + the signal that killed it.
inline int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs a command (arguments[0] is the program: FP8LAB_EXECUTABLE in tests) to its end with stdout
// and stderr appended to `log`; its exit status as wait_exit gives it.
inline int run_to_end(const std::vector<std::string>& arguments, const std::filesystem::path& log) {
  return wait_exit(experiments::start_child(arguments, log));
}

// `arguments` followed by `more`: a command and a variant of it.
inline std::vector<std::string> plus(std::vector<std::string> arguments,
                                     const std::vector<std::string>& more) {
  arguments.insert(arguments.end(), more.begin(), more.end());
  return arguments;
}

// The whole text of a file; "" when it cannot be read, so that the test's own checks on the
// content fail and show it.
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `text` as the whole of `path`, making its directory first.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The JSON of a file; throws nlohmann's parse error (which the test shows) when it is not JSON.
inline nlohmann::json read_json(const std::filesystem::path& path) {
  return nlohmann::json::parse(read_text(path));
}

// The run records of a results directory (runs/<run_id>.json, docs/results-schema.md) by run id,
// without the fields named in `without` (those of time, place and speed, when two directories are
// compared). Hidden files (runs/.<id>.json.invalid-<n>, temp files) are not records.
inline std::map<std::string, nlohmann::json> records(const std::filesystem::path& out,
                                                     const std::vector<std::string>& without = {}) {
  std::map<std::string, nlohmann::json> by_id;
  if (!std::filesystem::is_directory(out / "runs")) return by_id;
  for (const auto& entry : std::filesystem::directory_iterator(out / "runs")) {
    const auto name = entry.path().filename().string();
    if (name[0] == '.' || entry.path().extension() != ".json") continue;
    auto record = read_json(entry.path());
    for (const auto& field : without) record.erase(field);
    by_id[entry.path().stem().string()] = std::move(record);
  }
  return by_id;
}

// The fields of a run record that are timings by nature (docs/results-schema.md): two runs of the
// same thing differ there: records(out, kTimingFields) compares two directories without them.
inline const std::vector<std::string> kTimingFields = {"throughput", "started_at", "finished_at"};

// How many times `what` occurs in `text` (overlapping occurrences too).
inline std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Polls `done` every 10 ms until it holds (true) or `timeout` passes (false).
template <typename Condition>
bool eventually(Condition done, std::chrono::milliseconds timeout = std::chrono::minutes(1)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Sets (a value) or unsets (nullopt) environment variables for the children started while it
// lives, and restores what they were.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(
      std::initializer_list<std::pair<std::string, std::optional<std::string>>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      old_.emplace_back(name, old == nullptr ? std::nullopt : std::optional<std::string>(old));
      set(name, value);
    }
  }
  ~ScopedEnvironment() {
    for (auto it = old_.rbegin(); it != old_.rend(); ++it) set(it->first, it->second);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  static void set(const std::string& name, const std::optional<std::string>& value) {
    value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> old_;
};

// FP8LAB_CPU_NUMERICS=portable for the children started while it lives, with LibTorch's two pins
// unset, so that fp8lab sets them itself (experiments/run/cpu_numerics.hpp).
class PortableNumerics : public ScopedEnvironment {
 public:
  PortableNumerics()
      : ScopedEnvironment({{"FP8LAB_CPU_NUMERICS", "portable"},
                           {"ATEN_CPU_CAPABILITY", std::nullopt},
                           {"MKL_CBWR", std::nullopt}}) {}
};

// Writes `yaml` as DIR/sweep.yaml and runs `executable sweep DIR/sweep.yaml --out DIR/out` followed
// by `options` to its end, with its output in DIR/sweep.log; its exit status.
inline int sweep_yaml(const std::string& executable, const std::filesystem::path& dir,
                      const std::string& yaml, const std::vector<std::string>& options) {
  write_text(dir / "sweep.yaml", yaml);
  return run_to_end(
      plus({executable, "sweep", (dir / "sweep.yaml").string(), "--out", (dir / "out").string()},
           options),
      dir / "sweep.log");
}

// sweep_yaml of a grid of mlp over the FP8 formats listed (YAML flow items: "HYBRID, E4M3"), with
// the sweep keys `keys` (YAML lines: seeds, null_runs, ...), for 4 steps on 2 jobs: the sweeps of
// the tests that read what several seeds give (sweep.json, the records per seed, report.md).
inline int mlp_format_sweep(const std::string& executable, const std::filesystem::path& dir,
                            const std::string& formats, const std::string& keys) {
  return sweep_yaml(executable, dir,
                    "method: grid\nworkloads: [mlp]\n" + keys +
                        "parameters:\n  fp8_format: {values: [" + formats + "]}\n",
                    {"--steps", "4", "--jobs", "2"});
}

// A scratch directory holding sweep.yaml, a grid of mlp on seed 0 over the margins listed (YAML
// flow items: "0, 1"), and the command that sweeps it for 2 steps: the smallest real sweep, for
// tests of what the sweep does with its files.
class MlpSweep {
 public:
  MlpSweep(const std::string& name, std::string executable, const std::string& margins)
      : dir(name), out(dir / "out"), executable_(std::move(executable)) {
    write_text(dir / "sweep.yaml", "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                                   "parameters:\n  margin: {values: [" +
                                       margins + "]}\n");
    sweep = sweep_into(out);
  }
  // executable sweep DIR/sweep.yaml --out `into` --steps 2
  std::vector<std::string> sweep_into(const std::filesystem::path& into) const {
    return {executable_, "sweep", (dir / "sweep.yaml").string(), "--out", into.string(),
            "--steps",   "2"};
  }

  // The sweep command followed by `more` (--resume, --jobs N, ...).
  std::vector<std::string> sweep_with(const std::vector<std::string>& more) const {
    return plus(sweep, more);
  }

  // The run id of the sweep's baseline (mlp, seed 0, fp32, 2 steps).
  static inline const std::string kBaseline = "baseline-mlp-seed0-fp32-steps2";

  Scratch dir;
  std::filesystem::path out;       // DIR/out
  std::vector<std::string> sweep;  // sweep_into(out)

 private:
  std::string executable_;
};

}  // namespace fp8lab::testing
