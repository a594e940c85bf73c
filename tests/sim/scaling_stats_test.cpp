// The sums and statistics of sim/scaling/stats.hpp that the per-layer sidecar adds (issue 18):
// the MSE, the kurtosis from power sums and the widest blockwise dynamic range, on small
// hand-computed tensors whose figures are exact in binary; and the one-walk quantization_sums
// against a naive element-order reference of all three, bit for bit on every SIMD target (the
// walk's terms are computed in Highway lanes, stats_lanes.cpp).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "sim/quantize.hpp"
#include "sim/scaling/stats.hpp"
#include "sim/scaling/stats_lanes.hpp"
#include "tests/sim/float_bits.hpp"
#include "tests/sim/quantize_targets.hpp"

namespace fp8lab::sim::scaling {
using namespace fp8lab::testing;
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::uint64_t bits64(double v) { return std::bit_cast<std::uint64_t>(v); }

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

namespace {

// A tensor of arbitrary codes (NaN codes included) and scales over `x`'s shape, and an input with
// NaN, ±Inf, zeros, subnormals and a wide spread of magnitudes.
struct Case {
  std::vector<float> x;
  QuantizedTensor q;
};

Case random_case(std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                 std::int64_t block_cols, Format format, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Case c;
  c.q = layout(rows, cols, block_rows, block_cols);
  c.q.format = format;
  for (auto& code : c.q.data) code = static_cast<std::uint8_t>(rng() & 0xFFu);
  for (auto& s : c.q.scale_inv)
    s = std::ldexp(1.0f + static_cast<float>(rng() % 7) / 8.0f, static_cast<int>(rng() % 40) - 20);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  c.x.resize(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    switch (rng() % 16) {
      case 0: c.x[i] = kNan; break;
      case 1: c.x[i] = (rng() & 1u) != 0 ? kInf : -kInf; break;
      case 2: c.x[i] = (rng() & 1u) != 0 ? 0.0f : -0.0f; break;
      case 3: c.x[i] = 1e-40f * static_cast<float>(1 + rng() % 100); break;  // subnormal
      default: c.x[i] = std::ldexp(normal(rng), static_cast<int>(rng() % 30) - 15); break;
    }
  }
  return c;
}

// The three measures the naive way: dequantize(), then each element in order with its block
// found by division.
QuantizationSums reference_sums(const std::vector<float>& x, const QuantizedTensor& q) {
  const std::vector<float> xhat = dequantize(q);
  QuantizationSums sums;
  const auto blocks = static_cast<std::size_t>(q.scale_rows() * q.scale_cols());
  std::vector<float> largest(blocks, 0.0f), smallest(blocks, kInf);
  for (std::int64_t r = 0; r < q.rows; ++r) {
    for (std::int64_t c = 0; c < q.cols; ++c) {
      const auto i = static_cast<std::size_t>(r * q.cols + c);
      const float v = x[i];
      if (std::isfinite(v) && std::isfinite(xhat[i])) {
        const double e = static_cast<double>(v) - static_cast<double>(xhat[i]);
        sums.sqnr.signal += static_cast<double>(v) * v;
        sums.sqnr.noise += e * e;
        ++sums.sqnr.elements;
      }
      if (!std::isfinite(v)) continue;
      const double d = v;
      sums.moments.s1 += d;
      sums.moments.s2 += d * d;
      sums.moments.s3 += d * d * d;
      sums.moments.s4 += (d * d) * (d * d);
      ++sums.moments.elements;
      if (v == 0.0f) continue;
      const auto b =
          static_cast<std::size_t>((r / q.block_rows) * q.scale_cols() + c / q.block_cols);
      largest[b] = std::max(largest[b], std::fabs(v));
      smallest[b] = std::min(smallest[b], std::fabs(v));
    }
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    if (largest[b] == 0.0f) continue;
    sums.max_block_dynamic_range_log2 = std::max(
        sums.max_block_dynamic_range_log2,
        std::log2(static_cast<double>(largest[b])) - std::log2(static_cast<double>(smallest[b])));
  }
  return sums;
}

// quantization_sums and the three single-measure functions against the naive sums, every
// float64 sum compared bit for bit, on the SIMD target now dispatched to.
void check_against_naive(const Case& c) {
  REQUIRE(std::string(stats_detail::stats_target_name()) == std::string(sim::bulk_target_name()));
  const QuantizationSums fused = quantization_sums(c.x, c.q);
  const QuantizationSums naive = reference_sums(c.x, c.q);
  // Exact equality: the same float64 operations in the same order.
  CHECK(fused.sqnr.elements == naive.sqnr.elements);
  CHECK(bits64(fused.sqnr.signal) == bits64(naive.sqnr.signal));
  CHECK(bits64(fused.sqnr.noise) == bits64(naive.sqnr.noise));
  CHECK(fused.moments.elements == naive.moments.elements);
  CHECK(bits64(fused.moments.s1) == bits64(naive.moments.s1));
  CHECK(bits64(fused.moments.s2) == bits64(naive.moments.s2));
  CHECK(bits64(fused.moments.s3) == bits64(naive.moments.s3));
  CHECK(bits64(fused.moments.s4) == bits64(naive.moments.s4));
  CHECK(fused.max_block_dynamic_range_log2 == naive.max_block_dynamic_range_log2);
  // The single-measure functions are the same walk's parts.
  const SqnrSums sqnr = sqnr_sums(c.x, c.q);
  CHECK(sqnr.elements == naive.sqnr.elements);
  CHECK(bits64(sqnr.signal) == bits64(naive.sqnr.signal));
  CHECK(bits64(sqnr.noise) == bits64(naive.sqnr.noise));
  const MomentSums moments = moment_sums(c.x);
  CHECK(moments.elements == naive.moments.elements);
  CHECK(bits64(moments.s1) == bits64(naive.moments.s1));
  CHECK(bits64(moments.s2) == bits64(naive.moments.s2));
  CHECK(bits64(moments.s3) == bits64(naive.moments.s3));
  CHECK(bits64(moments.s4) == bits64(naive.moments.s4));
  CHECK(max_block_dynamic_range_log2(c.x, c.q) == naive.max_block_dynamic_range_log2);
}

}  // namespace

TEST_CASE("quantization_sums: the three measures in one walk, bit for bit the naive sums, every "
          "SIMD target",
          "[stats]") {
  struct Shape {
    std::int64_t rows, cols, block_rows, block_cols;
  };
  // Per-tensor, rowwise, columnwise, 1x128 and 128x128 with partial edge blocks, MX 1x32 / 32x1;
  // rows of 600 and 1000 (many chunks of the lanes' terms, the last one partial); rows of
  // 1, 7 and 13 (fewer elements than a vector has lanes, none a multiple of the lanes); blocks
  // of 3 columns (narrower than a vector) and 1 column.
  const auto shape = GENERATE(Shape{150, 70, 150, 70}, Shape{150, 70, 1, 70},
                              Shape{150, 70, 150, 1}, Shape{150, 300, 1, 128},
                              Shape{300, 150, 128, 128}, Shape{65, 96, 1, 32}, Shape{96, 65, 32, 1},
                              Shape{9, 1000, 9, 1000}, Shape{7, 600, 2, 256},
                              Shape{1000, 1, 1000, 1}, Shape{41, 7, 5, 3}, Shape{29, 13, 29, 1});
  const auto format = GENERATE(Format::E4M3, Format::E5M2);
  INFO(shape.rows << "x" << shape.cols << " in " << shape.block_rows << "x" << shape.block_cols
                  << " blocks, " << (format == Format::E4M3 ? "e4m3" : "e5m2"));
  const Case c = random_case(shape.rows, shape.cols, shape.block_rows, shape.block_cols, format,
                             static_cast<std::uint32_t>(shape.rows * 1000 + shape.block_cols));
  const QuantizationSums naive = reference_sums(c.x, c.q);
  // Not a vacuous comparison: elements of every kind were counted and the range is wide.
  CHECK(naive.sqnr.elements > 0);
  CHECK(naive.sqnr.elements < naive.moments.elements);  // NaN codes left some out
  CHECK(naive.max_block_dynamic_range_log2 > 10);
  for_each_simd_target([&] { check_against_naive(c); });
  CHECK_THROWS_WITH(quantization_sums(std::vector<float>(3, 1.0f), c.q),
                    Catch::Contains("quantization_sums: x.size() = 3"));
}

TEST_CASE("quantization_sums: blocks of only NaN, only ±Inf, only zeros or a NaN scale, every "
          "SIMD target",
          "[stats]") {
  // 6 x 40 in 2 x 8 blocks (block rows 0..2, block columns 0..4): block (0, 0) all NaN, (0, 1)
  // all ±Inf, (1, 2) all ±0, (2, 3) a NaN scale_inv (every x̂ NaN: no SQNR term, moments and
  // range kept), (1, 4) codes of NaN only; the rest random.
  Case c = random_case(6, 40, 2, 8, Format::E4M3, 46);
  for (std::size_t i = 0; i < c.x.size(); ++i) {  // elsewhere finite inputs and codes
    if (!std::isfinite(c.x[i])) c.x[i] = static_cast<float>(i) - 100.5f;
    if ((c.q.data[i] & 0x7F) == 0x7F) c.q.data[i] = 0x7E;
  }
  const auto fill_block = [&](std::int64_t br, std::int64_t bc, auto value) {
    for (std::int64_t r = br * 2; r < br * 2 + 2; ++r) {
      for (std::int64_t col = bc * 8; col < bc * 8 + 8; ++col) {
        value(c.x[static_cast<std::size_t>(r * 40 + col)],
              c.q.data[static_cast<std::size_t>(r * 40 + col)], r + col);
      }
    }
  };
  fill_block(0, 0, [](float& x, std::uint8_t&, std::int64_t) { x = kNan; });
  fill_block(0, 1, [](float& x, std::uint8_t&, std::int64_t i) { x = i % 2 == 0 ? kInf : -kInf; });
  fill_block(1, 2, [](float& x, std::uint8_t&, std::int64_t i) { x = i % 2 == 0 ? 0.0f : -0.0f; });
  c.q.scale_inv[static_cast<std::size_t>(2 * c.q.scale_cols() + 3)] = kNan;
  fill_block(1, 4, [](float&, std::uint8_t& code, std::int64_t i) {
    code = i % 2 == 0 ? 0x7F : 0xFF;  // E4M3's NaN codes
  });
  const QuantizationSums naive = reference_sums(c.x, c.q);
  CHECK(naive.sqnr.elements == 240 - 4 * 16);  // x NaN, x ±Inf, x̂ NaN (scale, codes)
  CHECK(naive.moments.elements == 240 - 2 * 16);
  CHECK(naive.max_block_dynamic_range_log2 > 0);
  for_each_simd_target([&] { check_against_naive(c); });
}

TEST_CASE("moment_sums: every length from 0 to 70, bit for bit in element order, every SIMD "
          "target",
          "[stats]") {
  // Magnitudes near 1 (so that every term's last bits reach the sums), with NaN, ±Inf and ±0.
  std::mt19937 rng(70);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(70);
  for (auto& v : x) v = normal(rng);
  x[3] = kNan;
  x[10] = kInf;
  x[17] = -kInf;
  x[20] = 0.0f;
  x[21] = -0.0f;
  for_each_simd_target([&] {
    for (std::size_t n = 0; n <= x.size(); ++n) {
      INFO("length " << n);
      MomentSums naive;
      for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(x[i])) continue;
        const double d = x[i];
        naive.s1 += d;
        naive.s2 += d * d;
        naive.s3 += d * d * d;
        naive.s4 += (d * d) * (d * d);
        ++naive.elements;
      }
      const MomentSums lanes = moment_sums(std::span<const float>(x.data(), n));
      CHECK(lanes.elements == naive.elements);
      CHECK(bits64(lanes.s1) == bits64(naive.s1));
      CHECK(bits64(lanes.s2) == bits64(naive.s2));
      CHECK(bits64(lanes.s3) == bits64(naive.s3));
      CHECK(bits64(lanes.s4) == bits64(naive.s4));
    }
  });
}

}  // namespace fp8lab::sim::scaling
