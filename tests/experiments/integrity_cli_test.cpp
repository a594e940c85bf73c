// Bad inputs as a user types them (issue 13, data integrity), through the fp8lab executable: each
// is refused before anything runs, with a message naming the flag or file, the value and what is
// accepted, and a non-zero exit status; nothing is written into --out.
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

struct BadInput {
  std::vector<std::string> arguments;  // after the executable
  std::vector<std::string> message;    // substrings the output must contain
};

}  // namespace

TEST_CASE("Bad command-line inputs get errors naming the flag or file, value and accepted values",
          "[integrity][cli]") {
  const auto dir = fs::temp_directory_path() / ("fp8lab-bad-inputs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "a_directory");
  const auto sweep = (dir / "sweep.yaml").string();
  std::ofstream(sweep) << "method: grid\nworkloads: [mlp]\nseeds: [0]\n"
                          "parameters:\n  margin: {values: [0, 1]}\n";
  const auto empty = (dir / "empty.yaml").string();
  std::ofstream(empty).flush();
  const auto comments = (dir / "comments.yaml").string();
  std::ofstream(comments) << "# a recipe, some day\n\n";
  const auto file = (dir / "a_file").string();
  std::ofstream(file) << "x\n";
  const auto out = (dir / "out").string();
  const std::vector<std::string> run = {"run",   "--workload", "mlp", "--set", "scaling=current",
                                        "--out", out};
  auto plus = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const std::vector<BadInput> cases = {
      {plus(run, {"--steps", "0"}),
       {"--steps", "'0' is not accepted; expected a whole number >= 1"}},
      {plus(run, {"--steps", "-3"}), {"--steps", "'-3'", ">= 1"}},
      {plus(run, {"--steps", "abc"}), {"--steps", "'abc'", ">= 1"}},
      {{"sweep", sweep, "--out", out, "--steps", "0"}, {"--steps", "'0'", ">= 1"}},
      {{"sweep", sweep, "--out", out, "--jobs", "0"}, {"--jobs", "'0'", "from 1 to 4096"}},
      {{"sweep", sweep, "--out", out, "--jobs", "-2"}, {"--jobs", "'-2'", "from 1 to 4096"}},
      {{"sweep", sweep, "--out", out, "--jobs", "1.5"}, {"--jobs", "'1.5'", "whole number"}},
      {plus(run, {"--seed", "text"}), {"--seed", "'text'", "whole number"}},
      {plus(run, {"--shadow-every", "-1"}), {"--shadow-every", "'-1'", ">= 0"}},
      {{"sweep", sweep, "--out", out, "--shadow-every", "abc"},
       {"--shadow-every", "'abc'", ">= 0"}},
      {{"run", "--workload", "mlp", "--set", "scaling=current", "--out", ""},
       {"--out", "'' is empty; expected a directory"}},
      {plus(run, {"--seed", "99999999999999999999"}), {"--seed", "2^63 - 1"}},
      {{"run", "--workload", "mpl", "--set", "scaling=current", "--out", out},
       {"--workload", "'mpl' is not a known workload; accepted: gpt-small, gpt-tiny",
        "did you mean 'mlp'?"}},
      {{"run", "--workload", "mlp", "--recipe", empty, "--out", out},
       {empty, "the file is empty (no text, or only comments)", "accepted: scaling"}},
      {{"run", "--workload", "mlp", "--recipe", comments, "--out", out},
       {comments, "the file is empty"}},
      {{"run", "--workload", "mlp", "--recipe", (dir / "a_directory").string(), "--out", out},
       {"--recipe", "directory"}},
      {{"explain", empty}, {empty, "the file is empty"}},
      {{"sweep", empty, "--out", out}, {empty, "sweep: the file is empty", "accepted: method"}},
      {{"sweep", comments, "--out", out}, {comments, "sweep: the file is empty"}},
      {{"sweep", (dir / "a_directory").string()}, {"directory"}},
      {{"sweep", sweep, "--out", out, "--shard", "0 / 2"}, {"--shard '0 / 2'", "0 <= i < n"}},
      {{"sweep", sweep, "--out", out, "--shard", "2/2"}, {"--shard '2/2'", "0 <= i < n"}},
      {{"sweep", sweep, "--out", file}, {"--out", file, "is not a directory"}},
      {plus({"run", "--workload", "mlp", "--set", "scaling=current"}, {"--out", file}),
       {"--out", "is not a directory"}},
      {{"sweep", sweep, "--out", out, "--heatmap-axes", "margn,scaling"},
       {"--heatmap-axes", "'margn' is not a recipe field", "did you mean 'margin'?"}},
      {{"report", dir.string()}, {"holds no results"}},
      // Issue 33: a list option never takes the next option as its value, and an unknown
      // --inject-nan layer is bad input, refused before training.
      {{"run", "--workload", "mlp", "--set", "scaling=current", "--what-if", ",,,", "--out", out},
       {"--what-if ',,,': an empty item; expected RECIPE[,RECIPE...]"}},
      {{"run", "--workload", "mlp", "--set", "scaling=current", "--what-if", "--out", out},
       {"--what-if", "'--out' is an option, not a value"}},
      {{"run", "--workload", "mlp", "--set", "--out", out}, {"--set", "'--out' is an option"}},
      {{"sweep", sweep, "--heatmap-axes", "margin,", "--out", out},
       {"--heatmap-axes 'margin,': an empty item; expected FIELD,FIELD"}},
      {{"report", dir.string(), "--heatmap-axes", ",", "--out", out},
       {"--heatmap-axes ',': an empty item"}},
      {{"literature", "L1", "--k", ",,,", "--rows", "2"}, {"--k ',,,': an empty item"}},
      {{"literature", "L1", "--k", "0", "--rows", "2"}, {"--k", "'0' is not accepted"}},
      {plus(run, {"--inject-nan", "nosuch@2:backward"}),
       {"--inject-nan: the model has no Linear 'nosuch'; its Linears: fc1, fc2, fc3"}},
  };
  int index = 0;
  for (const auto& bad : cases) {
    std::string command = "fp8lab";
    for (const auto& a : bad.arguments) command += " '" + a + "'";
    INFO(command);
    const auto log = dir / ("case" + std::to_string(index++) + ".log");
    std::vector<std::string> arguments = {FP8LAB_EXECUTABLE};
    arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
    CHECK(run_to_end(arguments, log) == 2);  // every bad input: usage errors too (main.cpp)
    const auto text = read_text(log);
    INFO("output: " << text);
    for (const auto& part : bad.message) CHECK_THAT(text, Catch::Contains(part));
    CHECK_FALSE(fs::exists(out));  // refused before anything ran
  }
  fs::remove_all(dir);
}

}  // namespace fp8lab::experiments
