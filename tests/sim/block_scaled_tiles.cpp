// Runs sim::block_scaled_gemm on a batch of tiles for tests/python/test_block_scaled_mmasim.py,
// which compares the outputs with MMA-Sim bit for bit:
//   sim_block_scaled_tiles IN FORMAT_A FORMAT_B SCALE_TYPE BLOCK PATH M N K COUNT
//   FORMAT_A, FORMAT_B e4m3 | e5m2 | e3m2 | e2m3 | e2m1; SCALE_TYPE ue8m0 | ue4m3; BLOCK 16 | 32;
//   PATH auto | mxf8f6f4 | mxf4nvf4.
// IN holds COUNT tiles as five consecutive arrays (little-endian): A codes uint8 [COUNT, M, K],
// B codes uint8 [COUNT, N, K], A scales uint8 [COUNT, M, K / BLOCK], B scales uint8
// [COUNT, N, K / BLOCK], C float32 [COUNT, M, N]. Writes D float32 [COUNT, M, N] to stdout.
// Bad arguments or input: a message naming the argument and what is accepted, exit 2.
// The tiles run on every SIMD target Highway built that this CPU has, and on the scalar reference
// (reference::block_scaled_gemm_into); the first target's D is written, and any other whose bits
// differ from it is named on stderr with exit 1, so that MMA-Sim's comparison covers them all.
#include <hwy/targets.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/gemm/block_scaled.hpp"
#include "tests/sim/program_args.hpp"

namespace {

using namespace fp8lab::sim;

const fp8lab::testing::ProgramArgs kArgs("sim_block_scaled_tiles",
                                         "IN FORMAT_A FORMAT_B ue8m0|ue4m3 16|32 "
                                         "auto|mxf8f6f4|mxf4nvf4 M N K COUNT");

Format parse_format(const char* what, std::string_view text) {
  for (Format f : {Format::E4M3, Format::E5M2, Format::E3M2, Format::E2M3, Format::E2M1}) {
    if (text == spec(f).name) return f;
  }
  kArgs.fail(std::string(what) + " '" + std::string(text) +
             "': accepted e4m3, e5m2, e3m2, e2m3, e2m1");
}

std::int64_t parse_size(const char* what, const char* text) {
  return kArgs.integer(what, text, 1, 1 << 24);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 11) kArgs.fail("expected 10 arguments");
  const Format fa = parse_format("FORMAT_A", argv[2]);
  const Format fb = parse_format("FORMAT_B", argv[3]);
  const std::string_view st = argv[4];
  if (st != "ue8m0" && st != "ue4m3")
    kArgs.fail("SCALE_TYPE '" + std::string(st) + "': ue8m0|ue4m3");
  const BlockScaleType scale_type = st == "ue8m0" ? BlockScaleType::kUe8m0 : BlockScaleType::kUe4m3;
  const std::int64_t block = parse_size("BLOCK", argv[5]);
  const std::string_view path_name = argv[6];
  BlockScaledPath path = BlockScaledPath::kAuto;
  if (path_name == "mxf8f6f4") {
    path = BlockScaledPath::kMxf8f6f4;
  } else if (path_name == "mxf4nvf4") {
    path = BlockScaledPath::kMxf4Nvf4;
  } else if (path_name != "auto") {
    kArgs.fail("PATH '" + std::string(path_name) + "': auto|mxf8f6f4|mxf4nvf4");
  }
  const std::int64_t m = parse_size("M", argv[7]), n = parse_size("N", argv[8]);
  const std::int64_t k = parse_size("K", argv[9]), count = parse_size("COUNT", argv[10]);
  if (k % block != 0) kArgs.fail("K must be a multiple of BLOCK");

  std::ifstream in(argv[1], std::ios::binary);
  if (!in) kArgs.fail(std::string("IN '") + argv[1] + "' cannot be read");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  const std::int64_t kb = k / block;
  const std::int64_t sizes[] = {count * m * k, count * n * k, count * m * kb, count * n * kb,
                                count * m * n * 4};
  std::int64_t expected = 0;
  for (std::int64_t s : sizes) expected += s;
  if (static_cast<std::int64_t>(bytes.size()) != expected) {
    kArgs.fail("IN has " + std::to_string(bytes.size()) + " bytes, expected " +
               std::to_string(expected) + " for these sizes");
  }
  const auto* base = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::uint8_t* codes_a = base;
  const std::uint8_t* codes_b = codes_a + sizes[0];
  const std::uint8_t* scales_a = codes_b + sizes[1];
  const std::uint8_t* scales_b = scales_a + sizes[2];
  std::vector<float> c(static_cast<std::size_t>(count * m * n));
  std::memcpy(c.data(), scales_b + sizes[3], c.size() * sizeof(float));

  // D of every tile by one implementation: gemm is block_scaled_gemm_into or the reference's.
  const auto run = [&](auto gemm) {
    std::vector<float> out(c.size());
    for (std::int64_t t = 0; t < count; ++t) {
      const BlockScaledOperand a{{codes_a + t * m * k, static_cast<std::size_t>(m * k)},
                                 {scales_a + t * m * kb, static_cast<std::size_t>(m * kb)},
                                 m,
                                 k,
                                 fa,
                                 block,
                                 scale_type};
      const BlockScaledOperand b{{codes_b + t * n * k, static_cast<std::size_t>(n * k)},
                                 {scales_b + t * n * kb, static_cast<std::size_t>(n * kb)},
                                 n,
                                 k,
                                 fb,
                                 block,
                                 scale_type};
      BlockScaledGemmOptions options;
      options.path = path;
      options.c = std::span<const float>(c).subspan(static_cast<std::size_t>(t * m * n),
                                                    static_cast<std::size_t>(m * n));
      gemm(a, b, options,
           std::span<float>(out).subspan(static_cast<std::size_t>(t * m * n),
                                         static_cast<std::size_t>(m * n)));
    }
    return out;
  };
  std::vector<float> out;
  int differ = 0;
  const auto compare = [&](const std::vector<float>& other, const std::string& name) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (std::bit_cast<std::uint32_t>(out[i]) != std::bit_cast<std::uint32_t>(other[i])) {
        std::fprintf(stderr, "sim_block_scaled_tiles: %s differs from %s at output %zu\n",
                     name.c_str(), hwy::TargetName(hwy::SupportedAndGeneratedTargets()[0]), i);
        differ = 1;
        return;
      }
    }
  };
  try {
    for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
      hwy::SetSupportedTargetsForTest(target);
      const auto d = run([](auto&&... args) { block_scaled_gemm_into(args...); });
      if (out.empty()) {
        out = d;
      } else {
        compare(d, hwy::TargetName(target));
      }
    }
    hwy::SetSupportedTargetsForTest(0);
    compare(run([](auto&&... args) { reference::block_scaled_gemm_into(args...); }), "reference");
  } catch (const std::exception& e) {
    kArgs.fail(e.what());
  }
  std::fwrite(out.data(), sizeof(float), out.size(), stdout);
  return differ;
}
