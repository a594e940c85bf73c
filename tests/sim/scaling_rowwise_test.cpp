// Rowwise / axiswise scaling (sim/scaling/rowwise.hpp) and the per-GEMM scale axes
// (sim/settings.hpp) against torchao-mx.md §1.2 and §2.4 (torchao float8_linear.py
// matmul_with_hp_or_float8_args; config.py recipes) and §4.4 (MX blocking per GEMM).
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/cast.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/rowwise.hpp"
#include "tests/sim/float_bits.hpp"
#include "tests/sim/random_floats.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::testing;

namespace {}  // namespace

// torchao-mx.md §2.4 (stored tensors X [M,K], W [N,K], dY [M,N]):
//   output      = input @ W^T : input dim -1 (per row), W^T [K,N] dim 0 (per output channel = per
//                 row of W)
//   grad_input  = dY @ W      : dY dim -1 (per row), W^T dim -1 (per column of W)
//   grad_weight = dY^T @ X    : dY dim 0 (per column), input dim 0 (per column)
TEST_CASE("Per-GEMM scale axes follow the reduction dimension") {
  CHECK(scale_axis(Gemm::kFprop, Operand::kInput) == ScaleAxis::kRowwise);
  CHECK(scale_axis(Gemm::kFprop, Operand::kWeight) == ScaleAxis::kRowwise);
  CHECK(scale_axis(Gemm::kDgrad, Operand::kGradOutput) == ScaleAxis::kRowwise);
  CHECK(scale_axis(Gemm::kDgrad, Operand::kWeight) == ScaleAxis::kColumnwise);
  CHECK(scale_axis(Gemm::kWgrad, Operand::kGradOutput) == ScaleAxis::kColumnwise);
  CHECK(scale_axis(Gemm::kWgrad, Operand::kInput) == ScaleAxis::kColumnwise);
  CHECK_FALSE(uses_operand(Gemm::kFprop, Operand::kGradOutput));
  CHECK_FALSE(uses_operand(Gemm::kDgrad, Operand::kInput));
  CHECK_FALSE(uses_operand(Gemm::kWgrad, Operand::kWeight));
  CHECK_THROWS_WITH(scale_axis(Gemm::kDgrad, Operand::kInput),
                    Catch::Contains("operand = input is not an operand of gemm = dgrad"));
}

// torchao-mx.md §1.2 recipe table.
TEST_CASE("torchao recipes: which cast each operand of each GEMM gets") {
  using S = OperandScaling;
  struct Row {
    TorchaoRecipe recipe;
    Gemm gemm;
    Operand operand;
    S scaling;
    Format format;
    bool pow2;
  };
  const Row table[] = {
      {TorchaoRecipe::kTensorwise, Gemm::kFprop, Operand::kInput, S::kTensorwise, Format::E4M3,
       false},
      {TorchaoRecipe::kTensorwise, Gemm::kFprop, Operand::kWeight, S::kTensorwise, Format::E4M3,
       false},
      {TorchaoRecipe::kTensorwise, Gemm::kDgrad, Operand::kGradOutput, S::kTensorwise, Format::E5M2,
       false},
      {TorchaoRecipe::kTensorwise, Gemm::kDgrad, Operand::kWeight, S::kTensorwise, Format::E4M3,
       false},
      {TorchaoRecipe::kTensorwise, Gemm::kWgrad, Operand::kGradOutput, S::kTensorwise, Format::E5M2,
       false},
      {TorchaoRecipe::kTensorwise, Gemm::kWgrad, Operand::kInput, S::kTensorwise, Format::E4M3,
       false},
      {TorchaoRecipe::kRowwise, Gemm::kFprop, Operand::kInput, S::kAxiswise, Format::E4M3, true},
      {TorchaoRecipe::kRowwise, Gemm::kFprop, Operand::kWeight, S::kAxiswise, Format::E4M3, true},
      {TorchaoRecipe::kRowwise, Gemm::kDgrad, Operand::kGradOutput, S::kAxiswise, Format::E4M3,
       true},
      {TorchaoRecipe::kRowwise, Gemm::kDgrad, Operand::kWeight, S::kAxiswise, Format::E4M3, true},
      {TorchaoRecipe::kRowwise, Gemm::kWgrad, Operand::kGradOutput, S::kAxiswise, Format::E4M3,
       true},
      {TorchaoRecipe::kRowwise, Gemm::kWgrad, Operand::kInput, S::kAxiswise, Format::E4M3, true},
      {TorchaoRecipe::kRowwiseWithGwHp, Gemm::kFprop, Operand::kInput, S::kAxiswise, Format::E4M3,
       true},
      {TorchaoRecipe::kRowwiseWithGwHp, Gemm::kFprop, Operand::kWeight, S::kAxiswise, Format::E4M3,
       true},
      {TorchaoRecipe::kRowwiseWithGwHp, Gemm::kDgrad, Operand::kGradOutput, S::kAxiswise,
       Format::E4M3, true},
      {TorchaoRecipe::kRowwiseWithGwHp, Gemm::kDgrad, Operand::kWeight, S::kTensorwise,
       Format::E4M3, true},
      {TorchaoRecipe::kRowwiseWithGwHp, Gemm::kWgrad, Operand::kGradOutput, S::kHighPrecision,
       Format::E4M3, true},
      {TorchaoRecipe::kRowwiseWithGwHp, Gemm::kWgrad, Operand::kInput, S::kHighPrecision,
       Format::E4M3, true},
  };
  for (const Row& row : table) {
    const OperandCast cast = torchao_operand_cast(row.recipe, row.gemm, row.operand);
    INFO(to_string(row.recipe) << " " << to_string(row.gemm) << " " << to_string(row.operand));
    CHECK(cast.scaling == row.scaling);
    if (cast.scaling != S::kHighPrecision) {
      CHECK(cast.format == row.format);
      CHECK(cast.pow2 == row.pow2);
    }
  }
}

TEST_CASE("Axiswise: one torchao scale per row or per column") {
  const std::int64_t rows = 5;
  const std::int64_t cols = 7;
  const std::vector<float> x =
      uniform_floats(static_cast<std::size_t>(rows * cols), -3.0f, 3.0f, 17);
  for (const bool pow2 : {false, true}) {
    const QuantizeResult r =
        quantize_axiswise_torchao(x, rows, cols, ScaleAxis::kRowwise, Format::E4M3, pow2);
    REQUIRE(r.tensor.block_rows == 1);
    REQUIRE(r.tensor.block_cols == cols);
    for (std::int64_t i = 0; i < rows; ++i) {
      double amax = 0.0;
      for (std::int64_t c = 0; c < cols; ++c)
        amax = std::fmax(amax, std::fabs(x[static_cast<std::size_t>(i * cols + c)]));
      // amax_to_scale written out: float64 division, one rounding to fp32, then pow2.
      float s = static_cast<float>(448.0 / amax);
      if (pow2) s = std::exp2(std::floor(static_cast<float>(std::log2(static_cast<double>(s)))));
      INFO("row " << i << " pow2 " << pow2);
      REQUIRE(bits(r.tensor.scale[static_cast<std::size_t>(i)]) == bits(s));
      REQUIRE(bits(r.tensor.scale_inv[static_cast<std::size_t>(i)]) == bits(1.0f / s));
      for (std::int64_t c = 0; c < cols; ++c) {
        const float v = x[static_cast<std::size_t>(i * cols + c)];
        REQUIRE(r.tensor.code_at(i, c) ==
                cast_fp32_to_fp8(v * s, Format::E4M3, Overflow::kSatFinite));
      }
    }
    const QuantizeResult col =
        quantize_axiswise_torchao(x, rows, cols, ScaleAxis::kColumnwise, Format::E5M2, pow2);
    REQUIRE(col.tensor.block_rows == rows);
    REQUIRE(col.tensor.block_cols == 1);
    for (std::int64_t c = 0; c < cols; ++c) {
      double amax = 0.0;
      for (std::int64_t i = 0; i < rows; ++i)
        amax = std::fmax(amax, std::fabs(x[static_cast<std::size_t>(i * cols + c)]));
      REQUIRE(bits(col.tensor.scale[static_cast<std::size_t>(c)]) ==
              bits(torchao_scale_from_amax(static_cast<float>(amax), 57344.0f, pow2)));
      for (std::int64_t i = 0; i < rows; ++i) {
        REQUIRE(col.tensor.scale_inv_at(i, c) == col.tensor.scale_inv[static_cast<std::size_t>(c)]);
      }
    }
  }
}

TEST_CASE("Axiswise: a NaN poisons only its own row; the operand API follows the recipe") {
  std::vector<float> x = {1.0f, 2.0f, 3.0f,  //
                          4.0f, kNaN, 6.0f,  //
                          7.0f, 8.0f, 9.0f};
  const QuantizeResult r =
      quantize_axiswise_torchao(x, 3, 3, ScaleAxis::kRowwise, Format::E4M3, true);
  CHECK(r.tensor.scale[0] == 128.0f);  // 448 / 3 -> 2^7
  CHECK(std::isnan(r.tensor.scale[1]));
  CHECK(r.tensor.scale[2] == 32.0f);  // 448 / 9 -> 2^5
  for (std::int64_t c = 0; c < 3; ++c) CHECK(r.tensor.code_at(1, c) == 0x7F);
  CHECK(r.stats.nan == 3);

  const auto fprop = quantize_torchao_operand(x, 3, 3, TorchaoRecipe::kRowwiseWithGwHp,
                                              Gemm::kFprop, Operand::kWeight);
  REQUIRE(fprop.has_value());
  CHECK(fprop->tensor.block_rows == 1);
  const auto dgrad = quantize_torchao_operand(x, 3, 3, TorchaoRecipe::kRowwiseWithGwHp,
                                              Gemm::kDgrad, Operand::kWeight);
  REQUIRE(dgrad.has_value());
  CHECK(dgrad->tensor.block_rows == 3);  // tensorwise
  CHECK(dgrad->tensor.block_cols == 3);
  CHECK_FALSE(quantize_torchao_operand(x, 3, 3, TorchaoRecipe::kRowwiseWithGwHp, Gemm::kWgrad,
                                       Operand::kInput)
                  .has_value());
  const auto rw =
      quantize_torchao_operand(x, 3, 3, TorchaoRecipe::kRowwise, Gemm::kWgrad, Operand::kInput);
  REQUIRE(rw.has_value());
  CHECK(rw->tensor.block_rows == 3);  // one scale per column
  CHECK(rw->tensor.block_cols == 1);
}
