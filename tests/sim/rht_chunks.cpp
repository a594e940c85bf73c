// Runs sim::random_hadamard_chunk_bf16 (TE's sign vector) on chunks for the MMA-Sim comparison in
// tests/python/test_block_scaled_mmasim.py:  sim_rht_chunks IN COUNT
// IN holds COUNT chunks of 16 fp32 values (bf16 values, little-endian); writes the COUNT x 16
// transformed values (bf16 as fp32) to stdout. Bad arguments: a message, exit 2.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/rht.hpp"

int main(int argc, char** argv) {
  const auto usage = [](const std::string& problem) {
    std::fprintf(stderr, "sim_rht_chunks: %s\nusage: sim_rht_chunks IN COUNT\n", problem.c_str());
    std::exit(2);
  };
  if (argc != 3) usage("expected 2 arguments");
  char* end = nullptr;
  const long long count = std::strtoll(argv[2], &end, 10);
  if (end == argv[2] || *end != '\0' || count < 1 || count > (1LL << 26)) {
    usage(std::string("COUNT '") + argv[2] + "' is not a number in 1..2^26");
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) usage(std::string("IN '") + argv[1] + "' cannot be read");
  std::vector<float> x(static_cast<std::size_t>(count) * fp8lab::sim::kRhtSize);
  in.read(reinterpret_cast<char*>(x.data()),
          static_cast<std::streamsize>(x.size() * sizeof(float)));
  if (in.gcount() != static_cast<std::streamsize>(x.size() * sizeof(float)) ||
      in.peek() != std::char_traits<char>::eof()) {
    usage("IN must hold exactly COUNT * 16 fp32 values");
  }
  std::vector<float> y(x.size());
  for (std::size_t c = 0; c < static_cast<std::size_t>(count); ++c) {
    fp8lab::sim::random_hadamard_chunk_bf16(x.data() + 16 * c, fp8lab::sim::kTeRhtSignMask,
                                            y.data() + 16 * c);
  }
  std::fwrite(y.data(), sizeof(float), y.size(), stdout);
  return 0;
}
