// Issue 45 item 3: the bits of every LibTorch CPU op a training run calls, under
// FP8LAB_CPU_NUMERICS=portable, against the hashes checked in beside this file
// (portable_op_hashes.txt). An op whose bits move fails by its name, with both hashes and sums, on
// whichever processor it moves: the per-op form of the golden loss curve (portable_golden_test),
// which says only that something moved. And the list keeps up with the workloads: every ATen op
// that a llama-xs, gpt-tiny or mlp step and eval call is either hashed or moves data only.
//
// To re-measure after a deliberate change (a new torch, a new op in the list):
//   FP8LAB_CPU_NUMERICS=portable build/experiments/fp8lab cpu-ops | grep -v '^#' >
//   tests/experiments/portable_op_hashes.txt
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>

#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

// name -> the rest of its line (shape, hash, sum), from `fp8lab cpu-ops` output or the file.
std::map<std::string, std::string> by_name(const std::string& text) {
  std::map<std::string, std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    lines[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
  }
  return lines;
}

std::string cpu_ops(const testing::Scratch& dir, const std::vector<std::string>& more) {
  const auto log = dir / "cpu-ops.txt";
  const int status = testing::run_to_end(testing::plus({FP8LAB_EXECUTABLE, "cpu-ops"}, more), log);
  INFO(testing::read_text(log));
  REQUIRE(status == 0);
  return testing::read_text(log);
}

}  // namespace

TEST_CASE("portable CPU numerics give the checked-in bits for every op of a training run",
          "[cpu_numerics][ops]") {
  const testing::PortableNumerics portable;
  const testing::Scratch dir("portable-ops");
  const auto output = cpu_ops(dir, {});
  const auto got = by_name(output);
  const auto expected = by_name(testing::read_text(std::string(FP8LAB_SOURCE_DIR) +
                                                   "/tests/experiments/portable_op_hashes.txt"));
  REQUIRE(expected.size() > 50);
  INFO("ran on " << output.substr(0, output.find('\n')));
  for (const auto& [name, line] : expected) {
    INFO("op: " << name << "\n  checked in: " << line
                << "\n  this machine: " << (got.contains(name) ? got.at(name) : "(not computed)"));
    CHECK((got.contains(name) && got.at(name) == line));
  }
  for (const auto& [name, line] : got) {
    INFO("op computed but not checked in: " << name << "\t" << line);
    CHECK(expected.contains(name));
  }
}

TEST_CASE("every ATen op a training step and eval call is hashed or moves data only",
          "[cpu_numerics][ops]") {
  const testing::Scratch dir("portable-ops-trace");
  for (const char* workload : {"llama-xs", "gpt-tiny", "mlp"}) {
    const auto output = cpu_ops(dir, {"--trace", workload, "--steps", "2"});
    INFO(workload << ":\n" << output);
    CHECK(testing::count_of(output, "\thashed") >= 5);
    CHECK(testing::count_of(output, "NOT COVERED") == 0);
  }
}

}  // namespace fp8lab::experiments
