// The sums and statistics of sim/scaling/stats.hpp that the per-layer sidecar adds (issue 18):
// the MSE, the kurtosis from power sums and the widest blockwise dynamic range, on small
// hand-computed tensors whose figures are exact in binary.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "sim/scaling/stats.hpp"

namespace fp8lab::sim::scaling {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A [rows, cols] tensor with blocks of block_rows x block_cols; codes and scales are never read
// by the dynamic range, only the block layout.
QuantizedTensor layout(std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                       std::int64_t block_cols) {
  QuantizedTensor q;
  q.rows = rows;
  q.cols = cols;
  q.block_rows = block_rows;
  q.block_cols = block_cols;
  q.data.assign(static_cast<std::size_t>(rows * cols), 0);
  q.scale_inv.assign(static_cast<std::size_t>(q.scale_rows() * q.scale_cols()), 1.0f);
  q.scale = q.scale_inv;
  return q;
}

}  // namespace

TEST_CASE("MSE is the noise per counted element", "[stats]") {
  CHECK(SqnrSums{4, 10.0, 2.0}.mse() == 0.5);
  CHECK(std::isnan(SqnrSums{}.mse()));
}

TEST_CASE("kurtosis from power sums: exact on small integers, finite elements only", "[stats]") {
  // {1, 2, 3, 4}: mean 2.5, m2 = 1.25, m4 = 2.5625, kurtosis 2.5625 / 1.5625 = 1.64; every
  // intermediate of the raw-moment expansion is exact in binary, so the quotient is RN(1.64).
  const std::vector<float> x{1, 2, kNan, 3, kInf, 4, -kInf};
  const MomentSums sums = moment_sums(x);
  CHECK(sums.elements == 4);
  CHECK(sums.s1 == 10);
  CHECK(sums.s2 == 30);
  CHECK(sums.s3 == 100);
  CHECK(sums.s4 == 354);
  CHECK(sums.kurtosis() == 1.64);
  // Pooled: the kurtosis of both parts' elements together ({1, 2, 3, 4} twice: the same).
  MomentSums pooled = sums;
  pooled.add(moment_sums(std::vector<float>{4, 3, 2, 1}));
  CHECK(pooled.elements == 8);
  CHECK(pooled.kurtosis() == 1.64);
  // A Gaussian's is 3; one outlier among equal values is far above.
  std::vector<float> spike(99, 1.0f);
  spike.push_back(100.0f);
  CHECK(moment_sums(spike).kurtosis() > 90);
  CHECK(std::isnan(moment_sums(std::vector<float>{5, 5, 5}).kurtosis()));  // m2 = 0
  CHECK(std::isnan(moment_sums(std::vector<float>{5}).kurtosis()));
}

TEST_CASE("the widest blockwise dynamic range, over finite nonzero magnitudes", "[stats]") {
  // [2, 4] in 1 x 2 blocks: {1, 8}: log2 8 = 3; {0, -0}: none; {2, 2}: 0; {-4, 0.25}: 4.
  const std::vector<float> x{1, 8, 0, -0.0f, 2, 2, -4, 0.25f};
  CHECK(max_block_dynamic_range_log2(x, layout(2, 4, 1, 2)) == 4.0);
  // One block for the whole tensor: 8 / 0.25 = 2^5.
  CHECK(max_block_dynamic_range_log2(x, layout(2, 4, 2, 4)) == 5.0);
  // 2 x 1 blocks (columnwise copies): {1, 2}: 1, {8, 2}: 2, {0, -4}: 0, {-0, 0.25}: 0.
  CHECK(max_block_dynamic_range_log2(x, layout(2, 4, 2, 1)) == 2.0);
  // Partial edge blocks, NaN and Inf left out; all-zero: 0.
  const std::vector<float> y{kNan, 0.5f, kInf, 16};
  CHECK(max_block_dynamic_range_log2(y, layout(1, 4, 1, 3)) == 0.0);  // {0.5} and {16}
  CHECK(max_block_dynamic_range_log2(y, layout(1, 4, 1, 4)) == 5.0);
  CHECK(max_block_dynamic_range_log2(std::vector<float>(4, 0.0f), layout(2, 2, 1, 2)) == 0.0);
  CHECK_THROWS_WITH(max_block_dynamic_range_log2(y, layout(2, 4, 1, 2)),
                    Catch::Contains("x.size() = 4"));
}

}  // namespace fp8lab::sim::scaling
