// Runs sim::random_hadamard_chunk_bf16 (TE's sign vector) on chunks for the MMA-Sim comparison in
// tests/python/test_block_scaled_mmasim.py:  sim_rht_chunks IN COUNT
// IN holds COUNT chunks of 16 fp32 values (bf16 values, little-endian); writes the COUNT x 16
// transformed values (bf16 as fp32) to stdout. Bad arguments: a message, exit 2.
// The chunks are the scalar model's (random_hadamard_chunk_bf16); the same tensor ([COUNT, 16],
// chunks along the rows) also goes through random_hadamard_transform_bf16 on every SIMD target
// Highway built that this CPU has, and a target whose bits differ is named on stderr with exit 1,
// so that MMA-Sim's comparison covers the lanes too.
#include <hwy/targets.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/rht.hpp"
#include "tests/sim/program_args.hpp"

int main(int argc, char** argv) {
  const fp8lab::testing::ProgramArgs args("sim_rht_chunks", "IN COUNT");
  if (argc != 3) args.fail("expected 2 arguments");
  const std::int64_t count = args.integer("COUNT", argv[2], 1, std::int64_t{1} << 26);
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) args.fail(std::string("IN '") + argv[1] + "' cannot be read");
  std::vector<float> x(static_cast<std::size_t>(count) * fp8lab::sim::kRhtSize);
  in.read(reinterpret_cast<char*>(x.data()),
          static_cast<std::streamsize>(x.size() * sizeof(float)));
  if (in.gcount() != static_cast<std::streamsize>(x.size() * sizeof(float)) ||
      in.peek() != std::char_traits<char>::eof()) {
    args.fail("IN must hold exactly COUNT * 16 fp32 values");
  }
  std::vector<float> y(x.size());
  for (std::size_t c = 0; c < static_cast<std::size_t>(count); ++c) {
    fp8lab::sim::random_hadamard_chunk_bf16(x.data() + 16 * c, fp8lab::sim::kTeRhtSignMask,
                                            y.data() + 16 * c);
  }
  int differ = 0;
  std::vector<float> lanes(x.size());
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    fp8lab::sim::random_hadamard_transform_bf16(x, count, fp8lab::sim::kRhtSize,
                                                fp8lab::sim::RhtAxis::kCols,
                                                fp8lab::sim::kTeRhtSignMask, lanes);
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (std::bit_cast<std::uint32_t>(y[i]) != std::bit_cast<std::uint32_t>(lanes[i])) {
        std::fprintf(stderr, "sim_rht_chunks: %s differs from the scalar model at value %zu\n",
                     hwy::TargetName(target), i);
        differ = 1;
        break;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  std::fwrite(y.data(), sizeof(float), y.size(), stdout);
  return differ;
}
