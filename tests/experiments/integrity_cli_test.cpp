// Bad inputs as a user types them (issue 13, data integrity), through the fp8lab executable: each
// is refused before anything runs, with a message naming the flag or file, the value and what is
// accepted, and a non-zero exit status; nothing is written into --out.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"
#include "tests/support/refusals.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;
using testing::plus;

}  // namespace

TEST_CASE("Bad command-line inputs get errors naming the flag or file, value and accepted values",
          "[integrity][cli]") {
  const testing::Scratch dir("bad-inputs");
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
  const std::vector<testing::Refused> cases = {
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
  // Every bad input exits 2, usage errors too (main.cpp).
  testing::check_refused(FP8LAB_EXECUTABLE, cases, dir, out);
}

}  // namespace fp8lab::experiments
