// gpu/'s host entry points taking sizes apply sim/element_count.hpp's check before any launch
// (issue 13, data integrity): rows * cols over int64 max and negative sizes are
// std::invalid_argument naming the function. Needs no GPU: every case throws before CUDA is
// touched (the pointers are never dereferenced).
#include <catch2/catch.hpp>

#include <cfloat>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu/gemm/gemm.hpp"
#include "gpu/quantize.hpp"
#include "gpu/scaling/blocked.hpp"

using namespace fp8lab;
using fp8lab::sim::Format;

namespace {

constexpr std::int64_t kHuge = std::int64_t{1} << 62;  // kHuge * 4 = 2^64: wraps to 0

float g_x[4];
std::uint8_t g_codes[4];
float g_scales[4];

gpu::scaling::BlockedOutputs outputs() {
  gpu::scaling::BlockedOutputs out;
  out.codes = g_codes;
  out.scale_inv = g_scales;
  return out;
}

using Call = std::function<void(std::int64_t rows, std::int64_t cols)>;

}  // namespace

TEST_CASE("gpu quantizers reject overflowing and negative sizes before launching") {
  namespace sc = gpu::scaling;
  const auto out = outputs();
  const std::vector<std::pair<std::string, Call>> calls = {
      {"gpu::scaling::quantize_block_te",
       [&](auto r, auto c) {
         sc::quantize_block_te(g_x, r, c, 1, 32, Format::E4M3, false, 0, FLT_MAX, out);
       }},
      {"gpu::scaling::quantize_axiswise_torchao",
       [&](auto r, auto c) {
         sc::quantize_axiswise_torchao(g_x, r, c, true, Format::E4M3, false, out);
       }},
      {"gpu::scaling::quantize_mx",
       [&](auto r, auto c) {
         sc::quantize_mx(g_x, r, c, 1, 32, Format::E4M3, sc::E8M0Mode::kTe,
                         sc::TorchaoVersion::kV0_18, out);
       }},
      {"gpu::scaling::quantize_current_te",
       [&](auto r, auto c) { sc::quantize_current_te(g_x, r, c, Format::E4M3, false, 0, out); }},
      {"gpu::scaling::quantize_tensorwise_torchao",
       [&](auto r, auto c) {
         sc::quantize_tensorwise_torchao(g_x, r, c, Format::E4M3, false, out);
       }},
      {"host_twin::quantize_block_te",
       [&](auto r, auto c) {
         sc::host_twin::quantize_block_te(g_x, r, c, 1, 32, Format::E4M3, false, 0, FLT_MAX, out);
       }},
      {"host_twin::quantize_mx",
       [&](auto r, auto c) {
         sc::host_twin::quantize_mx(g_x, r, c, 32, 1, Format::E4M3, sc::E8M0Mode::kTe,
                                    sc::TorchaoVersion::kV0_18, out);
       }},
      {"host_twin::quantize_current_te",
       [&](auto r, auto c) {
         sc::host_twin::quantize_current_te(g_x, r, c, Format::E4M3, false, 0, out);
       }},
      {"gpu::quantize_transpose",
       [&](auto r, auto c) {
         gpu::quantize_transpose(g_x, r, c, g_scales, Format::E4M3, sim::Overflow::kSatFinite,
                                 {g_codes, nullptr, nullptr, nullptr}, g_codes);
       }},
  };
  for (const auto& [name, call] : calls) {
    INFO(name);
    CHECK_THROWS_WITH(call(kHuge, 4), Catch::Contains(name + ": rows = 4611686018427387904") &&
                                          Catch::Contains("int64 max"));
    CHECK_THROWS_WITH(call(4, kHuge), Catch::Contains(name) && Catch::Contains("int64 max"));
    CHECK_THROWS_WITH(call(-2, 4), Catch::Contains(name) && Catch::Contains("-2"));
  }
}

TEST_CASE("gpu quantizers and their host twins apply one shape check (rows, cols, blocks)") {
  namespace sc = gpu::scaling;
  const auto out = outputs();
  // detail::check_blocked_shape: the device entry point and its host twin give the same message.
  for (const std::string prefix : {"gpu::scaling::", "host_twin::"}) {
    INFO(prefix);
    const bool twin = prefix == "host_twin::";
    auto block_te = [&](std::int64_t rows, std::int64_t br) {
      if (twin) {
        sc::host_twin::quantize_block_te(g_x, rows, 4, br, 32, Format::E4M3, false, 0, FLT_MAX,
                                         out);
      } else {
        sc::quantize_block_te(g_x, rows, 4, br, 32, Format::E4M3, false, 0, FLT_MAX, out);
      }
    };
    CHECK_THROWS_WITH(block_te(1, 0), prefix + "quantize_block_te: block_rows and block_cols "
                                               "must be >= 1, got 0, 32");
    CHECK_THROWS_WITH(block_te(0, 1),
                      prefix + "quantize_block_te: rows and cols must be >= 1, got 0, 4");
    auto current = [&](std::int64_t cols) {
      if (twin) {
        sc::host_twin::quantize_current_te(g_x, 1, cols, Format::E4M3, false, 0, out);
      } else {
        sc::quantize_current_te(g_x, 1, cols, Format::E4M3, false, 0, out);
      }
    };
    // Per-tensor: its one block is the tensor, so only rows and cols are ever named.
    CHECK_THROWS_WITH(current(0),
                      prefix + "quantize_current_te: rows and cols must be >= 1, got 1, 0");
  }
}

TEST_CASE("gpu GEMMs reject overflowing operand and output sizes before launching") {
  gpu::DeviceGemmOperand a;
  a.codes = g_codes;
  a.scale_inv = g_scales;
  a.rows = kHuge;
  a.cols = 4;
  a.block_rows = 1;
  a.block_cols = 4;
  CHECK_THROWS_WITH(gpu::gemm(a, a, {}, g_x),
                    Catch::Contains("gpu::gemm operand A: rows = 4611686018427387904") &&
                        Catch::Contains("int64 max"));
  // Each operand 2^40 x 1 fits; C = 2^40 x 2^40 does not.
  a.rows = std::int64_t{1} << 40;
  a.cols = 1;
  a.block_cols = 1;
  CHECK_THROWS_WITH(gpu::gemm(a, a, {}, g_x),
                    Catch::Contains("gpu::gemm output C (M x N)") && Catch::Contains("int64 max"));
  const gpu::DeviceDenseOperand dense{g_x, std::int64_t{1} << 40, 1, true};
  CHECK_THROWS_WITH(gpu::high_precision_gemm(dense, dense, {}, g_x),
                    Catch::Contains("gpu::high_precision_gemm output C (M x N)") &&
                        Catch::Contains("int64 max"));
  const gpu::DeviceDenseOperand huge{g_x, kHuge, 4, true};
  CHECK_THROWS_WITH(
      gpu::high_precision_gemm(huge, huge, {}, g_x),
      Catch::Contains("gpu::high_precision_gemm operand A: rows = 4611686018427387904"));
}
