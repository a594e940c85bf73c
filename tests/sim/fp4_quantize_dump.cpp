// Quantizes one fp32 tensor with an MXFP4/MXFP6 or NVFP4 plan and writes what the peers store, for
// the torchao conformance test (tests/python/test_fp4_scaling_torchao.py):
//   sim_fp4_quantize FORMAT MODE BLOCKS ROWS COLS IN OUT_PREFIX [SEED]
//   FORMAT nvfp4 | mxfp4 | mxfp6_e2m3 | mxfp6_e3m2
//   MODE   nvfp4: te | torchao | torchao_training;  mx: te | floor | ceil | even | rceil (0.18)
//   BLOCKS rowwise (1 x 16 / 1 x 32) | columnwise (16 x 1 / 32 x 1) | 2d (16 x 16 / 32 x 32) |
//          columnwise_rht (nvfp4: 16 x 1 after the plan's RHT down the rows, TE's sign vector)
//   SEED   nvfp4 te / torchao_training: round stochastically with Philox stream {SEED, 0}
//   IN     ROWS * COLS little-endian fp32, row-major
// Writes what the peers store (sim/scaling/stored.hpp: E2M1 packed two a byte, element 2i low;
// FP6 one code a byte; one raw scale byte per block; a columnwise copy as the codes and scales of
// xᵀ) as OUT_PREFIX.codes, OUT_PREFIX.scales and, for NVFP4, OUT_PREFIX.global (fp32 amax, encode
// scale, decode scale). Bad arguments: a message, exit 2. `fp8lab quantize` writes the same bytes
// as .npy files through the recipes' lowering; this program stays free of LibTorch for the test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scaling/execute.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/scaling/stored.hpp"
#include "tests/sim/program_args.hpp"

namespace {

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;

const fp8lab::testing::ProgramArgs kArgs("sim_fp4_quantize",
                                         "nvfp4|mxfp4|mxfp6_e2m3|mxfp6_e3m2 MODE "
                                         "rowwise|columnwise|2d|columnwise_rht ROWS COLS IN "
                                         "OUT_PREFIX [SEED]");

std::int64_t parse_dim(const char* what, const char* text) {
  return kArgs.integer(what, text, 1, 1 << 24);
}

void write(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) kArgs.fail("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8 && argc != 9) {
    kArgs.fail("expected 7 or 8 arguments, got " + std::to_string(argc - 1));
  }
  const std::string_view format = argv[1], mode = argv[2], blocks = argv[3];
  const std::int64_t rows = parse_dim("ROWS", argv[4]), cols = parse_dim("COLS", argv[5]);
  QuantizePlan plan;
  const bool nvfp4 = format == "nvfp4";
  if (nvfp4) {
    plan.kind = QuantizeKind::kNvfp4;
    plan.format = Format::E2M1;
    if (mode != "te" && mode != "torchao" && mode != "torchao_training")
      kArgs.fail("MODE '" + std::string(mode) + "': te, torchao, torchao_training");
    plan.nvfp4_mode = mode == "te"        ? Nvfp4Mode::kTe
                      : mode == "torchao" ? Nvfp4Mode::kTorchao
                                          : Nvfp4Mode::kTorchaoTraining;
  } else {
    plan.kind = QuantizeKind::kMx;
    if (format == "mxfp4") {
      plan.format = Format::E2M1;
    } else if (format == "mxfp6_e2m3") {
      plan.format = Format::E2M3;
    } else if (format == "mxfp6_e3m2") {
      plan.format = Format::E3M2;
    } else {
      kArgs.fail("FORMAT '" + std::string(format) + "': nvfp4, mxfp4, mxfp6_e2m3, mxfp6_e3m2");
    }
    bool found = false;
    for (const E8M0Mode m :
         {E8M0Mode::kTe, E8M0Mode::kFloor, E8M0Mode::kCeil, E8M0Mode::kEven, E8M0Mode::kRceil}) {
      if (mode == to_string(m)) plan.mx_mode = m, found = true;
    }
    if (!found) kArgs.fail("MODE '" + std::string(mode) + "': te, floor, ceil, even, rceil");
  }
  const std::int64_t n = nvfp4 ? kNvfp4BlockSize : kMxBlockSize;
  if (blocks == "rowwise") {
    plan.block = {1, n};
  } else if (blocks == "columnwise") {
    plan.block = {n, 1};
    plan.axis = ScaleAxis::kColumnwise;
  } else if (blocks == "2d") {
    plan.block = {n, n};
  } else if (blocks == "columnwise_rht" && nvfp4) {
    plan.block = {n, 1};
    plan.axis = ScaleAxis::kColumnwise;
    plan.rht = true;
  } else {
    kArgs.fail("BLOCKS '" + std::string(blocks) + "': rowwise, columnwise, 2d, columnwise_rht");
  }
  StochasticStream stream;
  if (argc == 9) {
    if (!nvfp4) kArgs.fail("SEED: stochastic rounding is an nvfp4 option");
    plan.stochastic_rounding = true;
    stream.seed = static_cast<std::uint64_t>(kArgs.integer("SEED", argv[8], 0, 1LL << 62));
  }
  std::ifstream in(argv[6], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) kArgs.fail(std::string("cannot read IN '") + argv[6] + "'");
  if (bytes.size() != static_cast<std::size_t>(rows * cols) * sizeof(float)) {
    kArgs.fail(std::string("IN '") + argv[6] + "' holds " + std::to_string(bytes.size()) +
               " bytes, ROWS * COLS * 4 = " + std::to_string(rows * cols * 4));
  }
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  std::memcpy(x.data(), bytes.data(), bytes.size());

  const QuantizeResult r = quantize(plan, x, rows, cols, 1, &stream);
  const StoredTensor stored = stored_bytes(plan, r.tensor);
  const std::string prefix = argv[7];
  write(prefix + ".codes", stored.codes.data(), stored.codes.size());
  write(prefix + ".scales", stored.scales.data(), stored.scales.size());
  if (nvfp4) write(prefix + ".global", stored.global.data(), stored.global.size() * 4);
  return 0;
}
