// sim::gemm on FP4/FP6 QuantizedTensors (gemm.hpp): blackwell_block lays the stored codes and raw
// scale bytes out for block_scaled_gemm and applies NVFP4's per-tensor scales as alpha;
// fp32_seq and exact read sub-byte codes as they read FP8 ones; the Hopper models refuse them.
// Expected values are computed here from the codes, scale bytes and per-tensor scales alone.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/cast.hpp"
#include "sim/gemm/block_scaled.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/rht.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/transposed.hpp"

namespace fp8lab::sim {
namespace {

namespace sc = scaling;

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (float& v : x) v = d(rng);
  x[3] = 50.0f;  // an outlier block
  return x;
}

// random_matrix(rows, cols, seed) quantized to NVFP4 in `block` blocks, as `mode` does it.
QuantizedTensor random_nvfp4(std::int64_t rows, std::int64_t cols, unsigned seed,
                             sc::BlockShape block, sc::Nvfp4Mode mode) {
  return sc::quantize_nvfp4(random_matrix(rows, cols, seed), rows, cols, block, mode).tensor;
}

}  // namespace

TEST_CASE("blackwell_block on NVFP4 tensors: block_scaled_gemm of the codes, times S_dec_A S_dec_B",
          "[gemm][fp4]") {
  constexpr std::int64_t M = 32, N = 16, K = 64;
  // Row-wise x (1 x 16) and 2-D w (16 x 16): the fprop pair of TE's recipe.
  const auto qx = random_nvfp4(M, K, 1, {1, 16}, sc::Nvfp4Mode::kTe);
  const auto qw = random_nvfp4(N, K, 2, {16, 16}, sc::Nvfp4Mode::kTe);
  GemmOptions o;
  o.accumulation = Accumulation::kBlackwellBlock;
  const auto got = gemm({qx, ReduceDim::kCols}, {qw, ReduceDim::kCols}, o);
  // The 2-D weight's scale bytes repeat for each of a tile's 16 rows.
  std::vector<std::uint8_t> w_scales(static_cast<std::size_t>(N * K / 16));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t j = 0; j < K / 16; ++j)
      w_scales[static_cast<std::size_t>(n * (K / 16) + j)] =
          qw.scale_e4m3[static_cast<std::size_t>((n / 16) * (K / 16) + j)];
  const BlockScaledOperand a{qx.data, qx.scale_e4m3,         M, K, Format::E2M1,
                             16,      BlockScaleType::kUe4m3};
  const BlockScaledOperand b{qw.data, w_scales, N, K, Format::E2M1, 16, BlockScaleType::kUe4m3};
  const auto raw = block_scaled_gemm(a, b, {});
  const float alpha = qx.global_scale[2] * qw.global_scale[2];
  REQUIRE(got.size() == raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    INFO("output " << i << ": got 0x" << std::hex << std::bit_cast<std::uint32_t>(got[i])
                   << ", want 0x" << std::bit_cast<std::uint32_t>(raw[i] * alpha));
    REQUIRE(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(raw[i] * alpha));
  }
  // The wgrad shape: both operands with K along their rows (16 x 1 blocks), transposed for the
  // model; the same bits as the K-contiguous copies of xᵀ.
  const auto cx = random_nvfp4(M, K, 1, {16, 1}, sc::Nvfp4Mode::kTe);  // x again
  const auto cy = random_nvfp4(M, N, 3, {16, 1}, sc::Nvfp4Mode::kTe);
  const auto dw = gemm({cy, ReduceDim::kRows}, {cx, ReduceDim::kRows}, o);
  const auto cy_t = transposed(cy.data, M, N), cx_t = transposed(cx.data, M, K);
  const auto cys = transposed(cy.scale_e4m3, M / 16, N), cxs = transposed(cx.scale_e4m3, M / 16, K);
  const auto dw_raw = block_scaled_gemm({cy_t, cys, N, M, Format::E2M1, 16, BlockScaleType::kUe4m3},
                                        {cx_t, cxs, K, M, Format::E2M1, 16, BlockScaleType::kUe4m3},
                                        {});
  const float alpha_w = cy.global_scale[2] * cx.global_scale[2];
  for (std::size_t i = 0; i < dw_raw.size(); ++i) {
    INFO("dW output " << i);
    REQUIRE(std::bit_cast<std::uint32_t>(dw[i]) ==
            std::bit_cast<std::uint32_t>(dw_raw[i] * alpha_w));
  }
}

TEST_CASE("blackwell_block on MXFP4 / MXFP6 tensors takes their E8M0 bytes, alpha 1",
          "[gemm][fp4]") {
  constexpr std::int64_t M = 8, N = 8, K = 64;
  const auto x = random_matrix(M, K, 4), w = random_matrix(N, K, 5);
  for (Format f : {Format::E2M1, Format::E2M3, Format::E3M2}) {
    INFO(spec(f).name);
    const auto qx = sc::quantize_mx(x, M, K, sc::ScaleAxis::kRowwise, f, sc::E8M0Mode::kTe).tensor;
    const auto qw = sc::quantize_mx(w, N, K, sc::ScaleAxis::kRowwise, f, sc::E8M0Mode::kTe).tensor;
    GemmOptions o;
    o.accumulation = Accumulation::kBlackwellBlock;
    const auto got = gemm({qx, ReduceDim::kCols}, {qw, ReduceDim::kCols}, o);
    const auto want =
        block_scaled_gemm({qx.data, qx.scale_e8m0, M, K, f, 32, BlockScaleType::kUe8m0},
                          {qw.data, qw.scale_e8m0, N, K, f, 32, BlockScaleType::kUe8m0}, {});
    for (std::size_t i = 0; i < want.size(); ++i)
      REQUIRE(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(want[i]));
  }
}

// A K that is not a multiple of the block (the quantizer clips the last block) reaches the layout's
// element-by-element path, which before 2026-12-07 also wrote the partial block's scale byte one
// slot past its row (past the buffer for the last row: the ASan build shows it); the GEMM then
// names the K it refuses.
TEST_CASE("blackwell_block refuses a K that is not a multiple of the block, naming it",
          "[gemm][fp4]") {
  constexpr std::int64_t M = 4, N = 4, K = 40;  // one block of 32 and a clipped one of 8
  for (const ReduceDim along : {ReduceDim::kCols, ReduceDim::kRows}) {
    const bool k_cols = along == ReduceDim::kCols;
    const auto axis = k_cols ? sc::ScaleAxis::kRowwise : sc::ScaleAxis::kColumnwise;
    const std::int64_t a_rows = k_cols ? M : K, a_cols = k_cols ? K : M;
    const std::int64_t b_rows = k_cols ? N : K, b_cols = k_cols ? K : N;
    const auto qa = sc::quantize_mx(random_matrix(a_rows, a_cols, 6), a_rows, a_cols, axis,
                                    Format::E2M1, sc::E8M0Mode::kTe)
                        .tensor;
    const auto qb = sc::quantize_mx(random_matrix(b_rows, b_cols, 7), b_rows, b_cols, axis,
                                    Format::E2M1, sc::E8M0Mode::kTe)
                        .tensor;
    GemmOptions o;
    o.accumulation = Accumulation::kBlackwellBlock;
    INFO((k_cols ? "K along the columns" : "K along the rows"));
    REQUIRE_THROWS_WITH(gemm({qa, along}, {qb, along}, o),
                        Catch::Contains("k = 40 is not a multiple of block = 32"));
  }
}

TEST_CASE("blackwell_block with K along the rows over several 64 x 64 layout tiles (MX 32 x 1, "
          "NVFP4 16 x 1)",
          "[gemm][fp4]") {
  // K = 160 rows, outer sizes 72 and 80: partial tiles on both sides of the transposed layout.
  constexpr std::int64_t M = 160, N = 72, K = 80;
  const auto y = random_matrix(M, N, 6), x = random_matrix(M, K, 7);
  GemmOptions o;
  o.accumulation = Accumulation::kBlackwellBlock;
  for (const bool nvfp4 : {false, true}) {
    INFO((nvfp4 ? "NVFP4 16 x 1" : "MXFP4 32 x 1"));
    const auto quantize = [nvfp4](const std::vector<float>& v, std::int64_t cols) {
      return nvfp4 ? sc::quantize_nvfp4(v, M, cols, {16, 1}, sc::Nvfp4Mode::kTe).tensor
                   : sc::quantize_mx(v, M, cols, sc::ScaleAxis::kColumnwise, Format::E2M1).tensor;
    };
    const auto cy = quantize(y, N), cx = quantize(x, K);
    const std::int64_t block = nvfp4 ? 16 : 32;
    const auto& ys = nvfp4 ? cy.scale_e4m3 : cy.scale_e8m0;
    const auto& xs = nvfp4 ? cx.scale_e4m3 : cx.scale_e8m0;
    const auto type = nvfp4 ? BlockScaleType::kUe4m3 : BlockScaleType::kUe8m0;
    const auto got = gemm({cy, ReduceDim::kRows}, {cx, ReduceDim::kRows}, o);
    const auto cy_t = transposed(cy.data, M, N), cx_t = transposed(cx.data, M, K);
    const auto cys = transposed(ys, M / block, N), cxs = transposed(xs, M / block, K);
    const auto raw = block_scaled_gemm({cy_t, cys, N, M, Format::E2M1, block, type},
                                       {cx_t, cxs, K, M, Format::E2M1, block, type}, {});
    const float alpha = nvfp4 ? cy.global_scale[2] * cx.global_scale[2] : 1.0f;
    REQUIRE(got.size() == raw.size());
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const float want = alpha == 1.0f ? raw[i] : raw[i] * alpha;
      if (std::bit_cast<std::uint32_t>(got[i]) != std::bit_cast<std::uint32_t>(want)) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("fp32_seq on FP4 tensors is NUMERICS §3's block formula over the decoded codes",
          "[gemm][fp4]") {
  constexpr std::int64_t M = 4, N = 3, K = 48;
  const auto qx = random_nvfp4(M, K, 6, {1, 16}, sc::Nvfp4Mode::kTorchao);
  const auto qw = random_nvfp4(N, K, 7, {1, 16}, sc::Nvfp4Mode::kTorchao);
  GemmOptions o;  // fp32_seq
  const auto got = gemm({qx, ReduceDim::kCols}, {qw, ReduceDim::kCols}, o);
  for (std::int64_t m = 0; m < M; ++m) {
    for (std::int64_t n = 0; n < N; ++n) {
      float total = 0.0f;
      for (std::int64_t j = 0; j < K / 16; ++j) {
        float p = 0.0f;
        for (std::int64_t k = j * 16; k < (j + 1) * 16; ++k)
          p += decode_subbyte(qx.code_at(m, k), Format::E2M1) *
               decode_subbyte(qw.code_at(n, k), Format::E2M1);  // exact products
        const float s = qx.scale_inv_at(m, j * 16) * qw.scale_inv_at(n, j * 16);
        total = j == 0 ? p * s : total + p * s;
      }
      INFO("C[" << m << "][" << n << "]");
      REQUIRE(std::bit_cast<std::uint32_t>(got[static_cast<std::size_t>(m * N + n)]) ==
              std::bit_cast<std::uint32_t>(total));
    }
  }
  o.accumulation = Accumulation::kHopperFastAccum;
  CHECK_THROWS_WITH(gemm({qx, ReduceDim::kCols}, {qw, ReduceDim::kCols}, o),
                    Catch::Contains("takes no FP4/FP6 operands"));
}

TEST_CASE("The plan executor: rht transforms first, stochastic_rounding needs and uses a stream",
          "[scaling][fp4]") {
  constexpr std::int64_t R = 32, C = 16;
  const auto x = random_matrix(R, C, 8);
  sc::QuantizePlan p;
  p.kind = sc::QuantizeKind::kNvfp4;
  p.format = Format::E2M1;
  p.block = {16, 1};
  p.axis = sc::ScaleAxis::kColumnwise;
  p.rht = true;
  std::vector<float> y(x.size());
  random_hadamard_transform_bf16(x, R, C, RhtAxis::kRows, kTeRhtSignMask, y);
  const auto got = sc::quantize(p, x, R, C, 2);
  CHECK(got.tensor.rht);
  CHECK(got.tensor.data == sc::quantize_nvfp4(y, R, C, {16, 1}, sc::Nvfp4Mode::kTe).tensor.data);
  p.rht = false;
  p.stochastic_rounding = true;
  CHECK_THROWS_WITH(sc::quantize(p, x, R, C, 1), Catch::Contains("needs a Philox stream"));
  const sc::StochasticStream s1{7, 1}, s2{7, 2};
  const auto a = sc::quantize(p, x, R, C, 1, &s1), b = sc::quantize(p, x, R, C, 1, &s1),
             c = sc::quantize(p, x, R, C, 1, &s2);
  CHECK(a.tensor.data == b.tensor.data);
  CHECK(a.tensor.data != c.tensor.data);
  CHECK(a.tensor.scale_e4m3 == c.tensor.scale_e4m3);  // SR changes codes, never scales
  p.nvfp4_mode = sc::Nvfp4Mode::kTorchao;
  CHECK_THROWS_WITH(sc::quantize(p, x, R, C, 1, &s1), Catch::Contains("mode te"));
}

}  // namespace fp8lab::sim
