// The command lines of the sim programs that the Python oracles drive (sim_block_scaled_tiles,
// sim_fp4_quantize, sim_subbyte_codes, sim_rht_chunks): a bad argument is "<program>: <problem>"
// and the usage line on stderr, exit 2.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fp8lab::testing {

class ProgramArgs {
 public:
  ProgramArgs(const char* program, const char* usage) : program_(program), usage_(usage) {}

  [[noreturn]] void fail(const std::string& problem) const {
    std::fprintf(stderr, "%s: %s\nusage: %s %s\n", program_, problem.c_str(), program_, usage_);
    std::exit(2);
  }

  // `text` as a whole integer in [lo, hi] (base 10, or with base 0 also 0x.. and 0..), else fail
  // naming `what`, the text and the range.
  std::int64_t integer(const char* what, const char* text, std::int64_t lo, std::int64_t hi,
                       int base = 10) const {
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, base);
    if (end == text || *end != '\0' || value < lo || value > hi) {
      fail(std::string(what) + " '" + text + "' is not a number in " + std::to_string(lo) + ".." +
           std::to_string(hi));
    }
    return value;
  }

 private:
  const char* program_;
  const char* usage_;
};

}  // namespace fp8lab::testing
