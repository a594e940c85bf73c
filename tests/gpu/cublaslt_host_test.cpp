// The host side of the cuBLASLt peer (no device needed):
// - gpu::cublaslt_scale_layout: sim's row-major per-block scale_inv relaid the way cuBLAS documents
//   for sm_90 FP8 scaling (§3.1.4.3, §3.1.4.5.1; gpu/cublaslt_scale_layout.hpp). Each
//   scale_inv[i] = i + 1, so every expected position below names the source block;
// - the scale modes per scaling kind, and the combinations CublasLtFp8Gemm refuses before touching
//   cuBLASLt or the device (gpu/cublaslt.hpp), each error naming what is accepted.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "gpu/cublaslt.hpp"
#include "gpu/cublaslt_scale_layout.hpp"

namespace {

using fp8lab::gpu::cublaslt_scale_layout;
using fp8lab::gpu::CublasLtScaleMode;

fp8lab::sim::QuantizedTensor scaled(std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                                    std::int64_t block_cols) {
  fp8lab::sim::QuantizedTensor t;
  t.rows = rows;
  t.cols = cols;
  t.block_rows = block_rows;
  t.block_cols = block_cols;
  t.data.assign(static_cast<std::size_t>(rows * cols), 0);
  t.scale_inv.resize(static_cast<std::size_t>(t.scale_rows() * t.scale_cols()));
  for (std::size_t i = 0; i < t.scale_inv.size(); ++i) t.scale_inv[i] = static_cast<float>(i + 1);
  return t;
}

}  // namespace

TEST_CASE("1x128 scales are transposed to outer-dimension-major [L][R]") {
  // 8 rows, K = 300: L = 3 blocks per row (the last partial); sim holds [8][3].
  const auto out = cublaslt_scale_layout(scaled(8, 300, 1, 128), CublasLtScaleMode::kVec128);
  REQUIRE(out.size() == 24);
  // out[l * 8 + r] = scale of row r, K block l = sim's [r * 3 + l] = r * 3 + l + 1.
  CHECK(out[0] == 1.0f);    // r 0, l 0
  CHECK(out[1] == 4.0f);    // r 1, l 0
  CHECK(out[7] == 22.0f);   // r 7, l 0
  CHECK(out[8] == 2.0f);    // r 0, l 1
  CHECK(out[17] == 6.0f);   // r 1, l 2
  CHECK(out[23] == 24.0f);  // r 7, l 2
}

TEST_CASE("128x128 scales keep K-block rows, padded to a stride that is a multiple of 4") {
  // 300 x 640: 3 row blocks (the last partial) x L = 5 K blocks; stride L4 = 8.
  const auto out =
      cublaslt_scale_layout(scaled(300, 640, 128, 128), CublasLtScaleMode::kBlock128x128);
  REQUIRE(out.size() == 24);
  const std::vector<float> expected = {1,  2, 3, 4, 5,  0,  0,  0,  6,  7, 8, 9,
                                       10, 0, 0, 0, 11, 12, 13, 14, 15, 0, 0, 0};
  CHECK(out == expected);
  // L already a multiple of 4: no padding (256 x 512: 2 x 4 blocks).
  const auto unpadded =
      cublaslt_scale_layout(scaled(256, 512, 128, 128), CublasLtScaleMode::kBlock128x128);
  CHECK(unpadded == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("tensorwise and rowwise scales pass through") {
  CHECK(cublaslt_scale_layout(scaled(32, 64, 32, 64), CublasLtScaleMode::kScalar) ==
        std::vector<float>{1});
  CHECK(cublaslt_scale_layout(scaled(4, 64, 1, 64), CublasLtScaleMode::kOuterVector) ==
        std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("block shapes without a cuBLASLt mode are refused, naming the blocks") {
  CHECK_THROWS_AS(cublaslt_scale_layout(scaled(32, 128, 1, 32), CublasLtScaleMode::kVec128),
                  std::invalid_argument);
  CHECK_THROWS_AS(cublaslt_scale_layout(scaled(256, 256, 128, 128), CublasLtScaleMode::kVec128),
                  std::invalid_argument);
  CHECK_THROWS_AS(cublaslt_scale_layout(scaled(256, 256, 1, 128), CublasLtScaleMode::kBlock128x128),
                  std::invalid_argument);
  CHECK_THROWS_AS(cublaslt_scale_layout(scaled(32, 256, 1, 128), CublasLtScaleMode::kOuterVector),
                  std::invalid_argument);
  CHECK_THROWS_AS(cublaslt_scale_layout(scaled(32, 256, 1, 128), CublasLtScaleMode::kScalar),
                  std::invalid_argument);
  // cuBLAS: M and N multiples of 4 for the 1D block mode.
  CHECK_THROWS_WITH(cublaslt_scale_layout(scaled(6, 256, 1, 128), CublasLtScaleMode::kVec128),
                    Catch::Contains("multiple of 4") &&
                        Catch::Contains("1x128 blocks of a 6x256 operand"));
}

TEST_CASE("scale modes per scaling kind: our A is the activation, our B the weight") {
  using fp8lab::gpu::CublasLtScaling;
  CHECK(fp8lab::gpu::a_scale_mode(CublasLtScaling::kTensorwise) == CublasLtScaleMode::kScalar);
  CHECK(fp8lab::gpu::b_scale_mode(CublasLtScaling::kTensorwise) == CublasLtScaleMode::kScalar);
  CHECK(fp8lab::gpu::a_scale_mode(CublasLtScaling::kRowwise) == CublasLtScaleMode::kOuterVector);
  CHECK(fp8lab::gpu::b_scale_mode(CublasLtScaling::kRowwise) == CublasLtScaleMode::kOuterVector);
  CHECK(fp8lab::gpu::a_scale_mode(CublasLtScaling::kBlock) == CublasLtScaleMode::kVec128);
  CHECK(fp8lab::gpu::b_scale_mode(CublasLtScaling::kBlock) == CublasLtScaleMode::kBlock128x128);
  CHECK(fp8lab::gpu::a_scale_mode(CublasLtScaling::kBlock1x128) == CublasLtScaleMode::kVec128);
  CHECK(fp8lab::gpu::b_scale_mode(CublasLtScaling::kBlock1x128) == CublasLtScaleMode::kVec128);
}

TEST_CASE("CublasLtFp8Gemm refuses what cuBLAS documents as refused, before any device call") {
  using fp8lab::gpu::CublasLtFp8Gemm;
  using fp8lab::gpu::CublasLtScaling;
  fp8lab::gpu::CublasLtGemmShape shape;
  shape.m = shape.n = shape.k = 256;
  SECTION("block scaling with fast accumulation") {
    for (const auto scaling : {CublasLtScaling::kBlock, CublasLtScaling::kBlock1x128}) {
      shape.scaling = scaling;
      shape.fast_accum = true;
      CHECK_THROWS_WITH(CublasLtFp8Gemm(shape), Catch::Contains("split accumulator") &&
                                                    Catch::Contains("fast_accum = false"));
    }
  }
  SECTION("e5m2 x e5m2") {
    shape.a_format = shape.b_format = fp8lab::sim::Format::E5M2;
    CHECK_THROWS_WITH(CublasLtFp8Gemm(shape),
                      Catch::Contains("accepted: e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3"));
  }
  SECTION("dimensions that are not multiples of 16") {
    shape.n = 40;
    CHECK_THROWS_WITH(CublasLtFp8Gemm(shape),
                      Catch::Contains("multiples of 16") && Catch::Contains("256x40x256"));
  }
}
