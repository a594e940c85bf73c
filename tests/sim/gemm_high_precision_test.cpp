// The high-precision GEMM (gemm.hpp) against a naive loop, bit for bit: fp32 and bf16-rounded
// operands, both orientations, bias, bf16 output, NaN/Inf, 1-3 threads. The data makes products
// inexact in fp32, so an FMA (one rounding instead of two) would change outputs; a guard checks
// that the test can see that difference.
#include <cmath>
#include <limits>

#include "tests/sim/gemm_test_support.hpp"

namespace fp8lab::testing {
namespace {

using sim::DenseOperand;
using sim::GemmOutputType;
using sim::HighPrecisionGemmOptions;

struct Dense {
  std::vector<float> data;
  std::int64_t rows, cols;
  ReduceDim k_dim;
  DenseOperand view() const { return {data, rows, cols, k_dim}; }
  float at(std::int64_t outer, std::int64_t k) const {
    return k_dim == ReduceDim::kCols ? data[static_cast<std::size_t>(outer * cols + k)]
                                     : data[static_cast<std::size_t>(k * cols + outer)];
  }
};

Dense random_dense(std::mt19937& rng, std::int64_t outer, std::int64_t k, ReduceDim k_dim) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Dense d{{}, k_dim == ReduceDim::kCols ? outer : k, k_dim == ReduceDim::kCols ? k : outer, k_dim};
  for (std::int64_t i = 0; i < outer * k; ++i) d.data.push_back(normal(rng));
  return d;
}

float round_bf16(float x) { return sim::bf16_to_fp32(sim::fp32_to_bf16(x)); }

std::vector<float> naive(const Dense& a, const Dense& b, std::int64_t m, std::int64_t n,
                         std::int64_t k, bool bf16_operands, const std::vector<float>& bias,
                         GemmOutputType output, bool fused) {
  std::vector<float> out;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        float x = a.at(i, kk), y = b.at(j, kk);
        if (bf16_operands) {
          x = round_bf16(x);
          y = round_bf16(y);
        }
        acc = fused ? std::fma(x, y, acc) : acc + x * y;
      }
      if (!bias.empty()) acc = acc + bias[static_cast<std::size_t>(j)];
      if (std::isnan(acc)) acc = std::bit_cast<float>(0x7FFFFFFFu);
      if (output == GemmOutputType::kBf16) acc = round_bf16(acc);
      out.push_back(acc);
    }
  }
  return out;
}

TEST_CASE("high-precision GEMM equals the naive multiply-then-add loop") {
  std::mt19937 rng(0x5eed'0201);
  const std::int64_t shapes[][3] = {{1, 1, 1},
                                    {1, 50, 64},
                                    {33, 1, 100},
                                    {17, 45, 129},
                                    {64, 64, 256}};
  int index = 0;
  bool fma_differs = false;
  for (const auto& s : shapes) {
    for (bool bf16_operands : {false, true}) {
      const ReduceDim a_dim = (index & 1) ? ReduceDim::kRows : ReduceDim::kCols;
      const ReduceDim b_dim = (index & 2) ? ReduceDim::kRows : ReduceDim::kCols;
      ++index;
      auto a = random_dense(rng, s[0], s[2], a_dim);
      const auto b = random_dense(rng, s[1], s[2], b_dim);
      if (index % 4 == 0) {
        a.data[0] = std::numeric_limits<float>::infinity();
        a.data.back() = std::numeric_limits<float>::quiet_NaN();
      }
      std::vector<float> bias;
      if (index % 2 == 0) {
        for (std::int64_t j = 0; j < s[1]; ++j) bias.push_back(0.25f * static_cast<float>(j));
      }
      const auto output = index % 3 == 0 ? GemmOutputType::kBf16 : GemmOutputType::kFp32;
      const auto expected = naive(a, b, s[0], s[1], s[2], bf16_operands, bias, output, false);
      REQUIRE(count_nonzero(expected) > 0);
      const auto fused = naive(a, b, s[0], s[1], s[2], bf16_operands, bias, output, true);
      for (std::size_t i = 0; i < expected.size(); ++i) {
        fma_differs = fma_differs || (std::bit_cast<std::uint32_t>(expected[i]) !=
                                      std::bit_cast<std::uint32_t>(fused[i]));
      }
      for_each_target_and_threads([&](int threads, const std::string& target_threads) {
        HighPrecisionGemmOptions options;
        options.round_operands_to_bf16 = bf16_operands;
        options.output = output;
        options.bias = bias;
        options.threads = threads;
        const std::string label = "high precision " + std::to_string(s[0]) + "x" +
                                  std::to_string(s[1]) + "x" + std::to_string(s[2]) +
                                  (bf16_operands ? " bf16 " : " fp32 ") + target_threads;
        require_same_bits(expected, sim::high_precision_gemm(a.view(), b.view(), options), s[1],
                          label);
      });
    }
  }
  REQUIRE(fma_differs);  // the data distinguishes mul-then-add from FMA
}

TEST_CASE("high-precision GEMM rejects inconsistent operands") {
  std::mt19937 rng(0x5eed'0202);
  const auto a = random_dense(rng, 4, 8, ReduceDim::kCols);
  const auto b = random_dense(rng, 4, 9, ReduceDim::kCols);
  REQUIRE_THROWS_WITH(sim::high_precision_gemm(a.view(), b.view(), {}),
                      Catch::Contains("disagree on K"));
  DenseOperand short_a = a.view();
  short_a.rows = 5;
  REQUIRE_THROWS_WITH(sim::high_precision_gemm(short_a, a.view(), {}),
                      Catch::Contains("rows * cols"));
}

}  // namespace
}  // namespace fp8lab::testing
