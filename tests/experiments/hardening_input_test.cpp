// Hostile input files refused when read, never after training (issue 19, items 4-6): non-UTF-8
// bytes (a run's record keeps its source's text, and JSON holds UTF-8 only: the record of a run
// that trained was lost), keys given twice in sweep files and accelerate configs (PyYAML keeps the
// last, yaml-cpp the first: fp8lab and accelerate disagreed on one file), terminal escapes in a
// sweep's name printed raw by --dry-run, and a grid too large to expand in memory.
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

struct Refused {
  std::string name;
  std::string file_text;
  std::vector<std::string> arguments;  // FILE stands for the file
  std::vector<std::string> message;    // substrings of the output (FILE: the file's path)
};

std::string replaced(std::string text, const std::string& file) {
  for (auto p = text.find("FILE"); p != std::string::npos; p = text.find("FILE", p + 1)) {
    text.replace(p, 4, file);
  }
  return text;
}

}  // namespace

TEST_CASE("Non-UTF-8 bytes and repeated keys are refused when the file is read",
          "[hardening][input]") {
  const testing::Scratch dir("input");
  const auto out = dir / "out";
  const std::string sweep_head = "method: grid\nworkloads: [mlp]\nseeds: [0]\n";
  // "1, 2, ..., 1000": a parameter's list of values for a grid too large to expand.
  std::string one_to_1000;
  for (int i = 1; i <= 1000; ++i) one_to_1000 += (i > 1 ? ", " : "") + std::to_string(i);
  const std::vector<Refused> cases = {
      {"latin-1 in a recipe's comment",
       "scaling: current\n# caf\xe9\n",
       {"run", "--workload", "mlp", "--recipe", "FILE", "--out", out.string(), "--steps", "2"},
       {"FILE:2: file text: not UTF-8 at byte offset 22 (byte 6 of the line) '0xe9'",
        "accepted: UTF-8 text"}},
      {"the same, explained",
       "scaling: current\n# caf\xe9\n",
       {"explain", "FILE"},
       {"FILE:2: file text: not UTF-8 at byte offset 22"}},
      {"0xff in a sweep's name",
       sweep_head + "name: bad\xff\nparameters:\n  margin: {values: [0]}\n",
       {"sweep", "FILE", "--out", out.string(), "--steps", "2"},
       {"FILE:4: file text: not UTF-8 at byte offset 50 (byte 10 of the line) '0xff'"}},
      {"a truncated UTF-8 sequence at the end",
       "scaling: current\n#\xe2\x82",
       {"explain", "FILE"},
       {"FILE:2: file text: not UTF-8 at byte offset 18 (byte 2 of the line) '0xe2'"}},
      {"an overlong '/' in an accelerate config",
       "mixed_precision: fp8\nfp8_config:\n  backend: TE # \xc0\xaf\n",
       {"explain", "FILE"},
       {"FILE:3: file text: not UTF-8 at byte offset 49 (byte 17 of the line) '0xc0'"}},
      {"a sweep key given twice",
       sweep_head + "parameters:\n  margin: {values: [0]}\nseeds: [1]\n",
       {"sweep", "FILE", "--out", out.string(), "--steps", "2"},
       {"FILE:6: seeds: is given twice (first on line 3; PyYAML would keep this one, yaml-cpp "
        "the first); accepted: each key once per mapping"}},
      {"a nested sweep key given twice",
       sweep_head + "parameters:\n  margin: {values: [0], values: [1]}\n",
       {"sweep", "FILE", "--dry-run"},
       {"FILE:5: parameters.margin.values: is given twice"}},
      {"fp8_config given twice in an accelerate config",
       "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  fp8_format: E4M3\n"
       "fp8_config:\n  backend: TE\n  fp8_format: HYBRID\n",
       {"explain", "FILE"},
       {"FILE:5: fp8_config: is given twice (first on line 2"}},
      {"an fp8_config key given twice",
       "mixed_precision: fp8\nfp8_config:\n  margin: 1\n  margin: 2\n",
       {"explain", "FILE"},
       {"FILE:4: fp8_config.margin: is given twice (first on line 3"}},
      {"a grid too large to expand (9 x 10^6 combinations)",
       sweep_head +
           "parameters:\n"
           "  margin: {values: [0, 1, 2, 3, 4, 5, 6, 7, 8]}\n"
           "  interval: {values: [" +
           one_to_1000 +
           "]}\n"
           "  amax_history_len: {values: [" +
           one_to_1000 + "]}\n",
       {"sweep", "FILE", "--dry-run"},
       {"requests too many combinations to expand: about 20.7 GB at about 2300 bytes each",
        "above the 2.0 GB limit", "accepted: at most 869565 combinations"}},
  };
  int index = 0;
  for (const auto& bad : cases) {
    INFO(bad.name);
    const auto file = dir / ("case" + std::to_string(index) + ".yaml");
    std::ofstream(file, std::ios::binary) << bad.file_text;
    std::vector<std::string> arguments = {FP8LAB_EXECUTABLE};
    for (const auto& a : bad.arguments) arguments.push_back(replaced(a, file.string()));
    const auto log = dir / ("case" + std::to_string(index++) + ".log");
    CHECK(run_to_end(arguments, log) == 2);
    const auto text = read_text(log);
    INFO("output: " << text);
    for (const auto& part : bad.message) CHECK_THAT(text, Catch::Contains(replaced(part, file)));
    CHECK_FALSE(fs::exists(out / "runs"));  // refused before anything trained
  }

  SECTION("non-UTF-8 in an ACCELERATE_FP8_* variable") {
    ::setenv("ACCELERATE_FP8_FORMAT", "E4M3\xff", 1);
    const int code = run_to_end({FP8LAB_EXECUTABLE, "explain", "--env"}, dir / "env.log");
    ::unsetenv("ACCELERATE_FP8_FORMAT");
    CHECK(code == 2);
    CHECK_THAT(read_text(dir / "env.log"),
               Catch::Contains("environment: ACCELERATE_FP8_FORMAT: not UTF-8 at byte offset 4 "
                               "(byte 5 of the line) '0xff'"));
  }
}

TEST_CASE("--dry-run prints a sweep's name without its terminal escapes", "[hardening][input]") {
  const testing::Scratch dir("ansi");
  // ESC [ 2 J (clear screen), a C1 CSI (U+009B), a bell, in a quoted YAML string.
  std::ofstream(dir / "sweep.yaml") << "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                                       "name: \"evil\\e[2Jname\\u009b31m\\a\"\n"
                                       "parameters:\n  margin: {values: [0]}\n";
  const auto log = dir / "dry.log";
  CHECK(run_to_end({FP8LAB_EXECUTABLE, "sweep", (dir / "sweep.yaml").string(), "--dry-run"}, log) ==
        0);
  const auto text = read_text(log);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("(evil\\x1b[2Jname\\u009b31m\\x07)"));
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("\xc2\x9b") == std::string::npos);
  CHECK(text.find('\a') == std::string::npos);
}

}  // namespace fp8lab::experiments
