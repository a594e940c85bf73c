// Bad command lines and what fp8lab must say to each, for the tests of refusals: each exits 2 with
// a message naming the flag or file, the value and what is accepted, before anything is written.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"

namespace fp8lab::testing {

struct Refused {
  std::vector<std::string> arguments;  // after the executable
  std::vector<std::string> message;    // substrings the output must contain
};

// Runs `executable` on each case (output in DIR/case<i>.log) and checks the exit status 2, every
// substring of the message, and that `untouched` does not exist: refused before anything ran.
inline void check_refused(const std::string& executable, const std::vector<Refused>& cases,
                          const std::filesystem::path& dir,
                          const std::filesystem::path& untouched) {
  int index = 0;
  for (const auto& bad : cases) {
    std::string command = "fp8lab";
    for (const auto& a : bad.arguments) command += " '" + a + "'";
    INFO(command);
    const auto log = dir / ("case" + std::to_string(index++) + ".log");
    CHECK(run_to_end(plus({executable}, bad.arguments), log) == 2);
    const auto text = read_text(log);
    INFO("output: " << text);
    for (const auto& part : bad.message) CHECK_THAT(text, Catch::Contains(part));
    CHECK_FALSE(std::filesystem::exists(untouched));
  }
}

}  // namespace fp8lab::testing
