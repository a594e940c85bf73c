// fp32_seq (gemm.hpp, docs/numerics.md §3) against a naive triple loop written from the header's
// formulas, bit for bit: every scaling kind, both storage orientations of each operand, awkward
// shapes (K not a multiple of the block, M or N of 1), E4M3 x E5M2 mixes, bias, bf16 output,
// zero / NaN / Inf operands, pad_inner_dim, and 1, 2 and 3 threads.
#include <algorithm>
#include <limits>

#include "sim/gemm/plan.hpp"
#include "tests/sim/gemm_test_support.hpp"

namespace fp8lab::testing {
namespace {

using sim::Accumulation;
using sim::GemmOperand;
using sim::GemmOptions;
using sim::GemmOutputType;

// The K-block length of gemm.hpp: K when both operands' scale runs along K cover K, else the
// smaller run.
std::int64_t block_length(const GemmOperand& a, const GemmOperand& b, std::int64_t k) {
  auto run = [](const GemmOperand& op) {
    return op.k_dim == ReduceDim::kCols ? op.tensor.block_cols : op.tensor.block_rows;
  };
  std::int64_t g = k;
  if (run(a) < k) g = run(a);
  if (run(b) < k) g = std::min(g, run(b));
  return g;
}

float element(const GemmOperand& op, std::int64_t outer, std::int64_t k) {
  const auto& t = op.tensor;
  return op.k_dim == ReduceDim::kCols ? sim::decode_fp8(t.code_at(outer, k), t.format)
                                      : sim::decode_fp8(t.code_at(k, outer), t.format);
}
float scale(const GemmOperand& op, std::int64_t outer, std::int64_t k) {
  return op.k_dim == ReduceDim::kCols ? op.tensor.scale_inv_at(outer, k)
                                      : op.tensor.scale_inv_at(k, outer);
}

std::vector<float> naive_fp32_seq(const GemmOperand& a, const GemmOperand& b,
                                  const std::vector<float>& bias, GemmOutputType output) {
  const auto shape = sim::gemm_shape(a, b);
  const std::int64_t g = block_length(a, b, shape.k);
  std::vector<float> out;
  for (std::int64_t m = 0; m < shape.m; ++m) {
    for (std::int64_t n = 0; n < shape.n; ++n) {
      float total = 0.0f;
      for (std::int64_t k0 = 0; k0 < shape.k; k0 += g) {
        float acc = 0.0f;
        for (std::int64_t k = k0; k < std::min(k0 + g, shape.k); ++k) {
          acc = acc + element(a, m, k) * element(b, n, k);
        }
        const float s = scale(a, m, k0) * scale(b, n, k0);
        const float t = acc * s;
        total = k0 == 0 ? t : total + t;
      }
      if (!bias.empty()) total = total + bias[static_cast<std::size_t>(n)];
      if (std::isnan(total)) total = std::bit_cast<float>(0x7FFFFFFFu);
      if (output == GemmOutputType::kBf16) total = sim::bf16_to_fp32(sim::fp32_to_bf16(total));
      out.push_back(total);
    }
  }
  return out;
}

struct KindPair {
  ScalingKind a, b;
};

// Every pairing a recipe produces, plus mixes whose K-runs line up.
const KindPair kPairs[] = {
    {kPerTensor, kPerTensor},   {kRowwise, kRowwise},         {kRowwise, kPerTensor},
    {kBlock1x128, kBlock1x128}, {kBlock1x128, kBlock128x128}, {kBlock128x128, kBlock1x128},
    {kMx1x32, kMx1x32},         {kMx1x32, kMx32x32},          {kRowwise, kBlock1x128},
    {kMx1x32, kBlock1x128},
};

TEST_CASE("fp32_seq equals the naive loop for every scaling kind, shape and orientation") {
  std::mt19937 rng(0x5eed'0001);
  const std::int64_t shapes[][3] = {{1, 1, 1},    {1, 37, 200},  {29, 1, 129},
                                    {7, 33, 31},  {13, 65, 257}, {64, 32, 384},
                                    {6, 96, 100}, {50, 70, 33},  {5, 40, 1100}};
  const Format formats[][2] = {{Format::E4M3, Format::E4M3},
                               {Format::E4M3, Format::E5M2},
                               {Format::E5M2, Format::E4M3}};
  std::size_t case_index = 0;
  for (const auto& pair : kPairs) {
    for (const auto& shape : shapes) {
      const auto [m, n, k] = std::tuple{shape[0], shape[1], shape[2]};
      const auto& fmt = formats[case_index % 3];
      const ReduceDim a_dim = (case_index & 1) ? ReduceDim::kRows : ReduceDim::kCols;
      const ReduceDim b_dim = (case_index & 2) ? ReduceDim::kRows : ReduceDim::kCols;
      const bool pow2 = (case_index & 4) != 0;
      ++case_index;
      const auto ta = random_operand(rng, m, k, a_dim, fmt[0], pair.a, pow2);
      const auto tb = random_operand(rng, n, k, b_dim, fmt[1], pair.b, pow2);
      const GemmOperand a{ta, a_dim}, b{tb, b_dim};
      std::vector<float> bias;
      if (case_index % 2 == 0) {
        std::uniform_real_distribution<float> u(-100.0f, 100.0f);
        for (std::int64_t i = 0; i < n; ++i) bias.push_back(u(rng));
      }
      const auto output = case_index % 3 == 0 ? GemmOutputType::kBf16 : GemmOutputType::kFp32;
      const auto expected = naive_fp32_seq(a, b, bias, output);
      const std::string label = std::string(pair.a.name) + " x " + pair.b.name + " " +
                                std::to_string(m) + "x" + std::to_string(n) + "x" +
                                std::to_string(k);
      INFO(label);
      REQUIRE(count_nonzero(expected) > 0);
      for_each_target_and_threads([&](int threads, const std::string& target_threads) {
        GemmOptions options;
        options.output = output;
        options.bias = bias;
        options.threads = threads;
        require_same_bits(expected, sim::gemm(a, b, options), n, label + " " + target_threads, &ta,
                          &tb);
      });
    }
  }
}

TEST_CASE("fp32_seq: the three GEMMs of a Linear address the same stored tensors") {
  // X [M,K], W [N,K], dY [M,N]; dgrad reads W along its rows, wgrad dY and X along theirs.
  std::mt19937 rng(0x5eed'0002);
  const std::int64_t m = 40, k = 48, n = 24;
  const auto x = random_operand(rng, m, k, ReduceDim::kCols, Format::E4M3, kPerTensor, true);
  const auto w = random_operand(rng, n, k, ReduceDim::kCols, Format::E4M3, kPerTensor, true);
  const auto dy = random_operand(rng, m, n, ReduceDim::kCols, Format::E5M2, kPerTensor, true);
  const struct {
    const char* name;
    GemmOperand a, b;
    std::int64_t rows, cols;
  } gemms[] = {{"fprop", {x, ReduceDim::kCols}, {w, ReduceDim::kCols}, m, n},
               {"dgrad", {dy, ReduceDim::kCols}, {w, ReduceDim::kRows}, m, k},
               {"wgrad", {dy, ReduceDim::kRows}, {x, ReduceDim::kRows}, n, k}};
  for (const auto& g : gemms) {
    const auto shape = sim::gemm_shape(g.a, g.b);
    REQUIRE(shape.m == g.rows);
    REQUIRE(shape.n == g.cols);
    const auto expected = naive_fp32_seq(g.a, g.b, {}, GemmOutputType::kFp32);
    REQUIRE(count_nonzero(expected) > 0);
    require_same_bits(expected, sim::gemm(g.a, g.b, {}), g.cols, g.name, &g.a.tensor, &g.b.tensor);
  }
}

TEST_CASE("fp32_seq: all-zero, NaN and Inf operands") {
  std::mt19937 rng(0x5eed'0003);
  const std::int64_t m = 9, n = 35, k = 70;
  for (const auto& pair : kPairs) {
    INFO(pair.a.name << " x " << pair.b.name);
    auto ta = random_operand(rng, m, k, ReduceDim::kCols, Format::E5M2, pair.a, false);
    auto tb = random_operand(rng, n, k, ReduceDim::kCols, Format::E5M2, pair.b, false);
    // All-zero A: every output is +0 (bits 0), also with negative zeros in A.
    auto zero = ta;
    for (std::size_t i = 0; i < zero.data.size(); ++i) zero.data[i] = (i % 3 == 0) ? 0x80 : 0x00;
    const auto zeros = sim::gemm({zero, ReduceDim::kCols}, {tb, ReduceDim::kCols}, {});
    for (float v : zeros) REQUIRE(std::bit_cast<std::uint32_t>(v) == 0u);
    // NaN (0x7F, 0xFF), +Inf (0x7C), -Inf (0xFC) sprinkled in both operands.
    const std::uint8_t specials[] = {0x7F, 0xFF, 0x7C, 0xFC, 0x7C};
    for (std::size_t i = 0; i < 6; ++i) {
      ta.data[(i * 97) % ta.data.size()] = specials[i % 5];
      tb.data[(i * 131 + 5) % tb.data.size()] = specials[(i + 2) % 5];
    }
    const GemmOperand a{ta, ReduceDim::kCols}, b{tb, ReduceDim::kCols};
    const auto expected = naive_fp32_seq(a, b, {}, GemmOutputType::kFp32);
    const auto specials_seen =
        std::count_if(expected.begin(), expected.end(), [](float v) { return !std::isfinite(v); });
    REQUIRE(specials_seen > 0);
    REQUIRE(count_nonzero(expected) > static_cast<std::size_t>(specials_seen));
    require_same_bits(expected, sim::gemm(a, b, {}), n,
                      std::string("specials ") + pair.a.name + " x " + pair.b.name, &ta, &tb);
  }
}

// The epilogue alone (output.cpp's finish_values, which the tile loop and finish_output call per
// row) on totals no GEMM above produces: -0 (which must stay -0 without a bias: no + 0 may be
// added), NaNs of several payloads and signs, infinities and subnormals, in rows whose length leaves
// a tail past every vector width.
TEST_CASE("the output epilogue: -0, NaN payloads, Inf and subnormals, element by element") {
  const std::vector<float> specials = {-0.0f,
                                       0.0f,
                                       std::bit_cast<float>(0xFFC00001u),  // -NaN, payload 1
                                       std::bit_cast<float>(0x7F800001u),  // signalling NaN
                                       std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity(),
                                       std::numeric_limits<float>::denorm_min(),
                                       -1.5f,
                                       3.0e38f,
                                       1.0f};
  constexpr std::int64_t kRows = 3, kCols = 37, kTotalStride = 40, kOutStride = 45;
  std::vector<float> total(kRows * kTotalStride), bias(kCols);
  for (std::size_t i = 0; i < total.size(); ++i) total[i] = specials[(i * 7) % specials.size()];
  for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = specials[(i * 3 + 1) % specials.size()];
  for (const GemmOutputType output : {GemmOutputType::kFp32, GemmOutputType::kBf16}) {
    for (const bool with_bias : {false, true}) {
      std::vector<float> out(kRows * kOutStride, 42.0f);
      for (std::int64_t r = 0; r < kRows; ++r) {
        sim::gemm_detail::finish_values(total.data() + r * kTotalStride,
                                        with_bias ? bias.data() : nullptr, output, kCols,
                                        out.data() + r * kOutStride);
      }
      std::vector<float> expected(out.size(), 42.0f);
      std::size_t negative_zeros = 0;
      for (std::int64_t r = 0; r < kRows; ++r) {
        for (std::int64_t c = 0; c < kCols; ++c) {
          float v = total[r * kTotalStride + c];
          if (with_bias) v = v + bias[c];
          if (std::isnan(v)) v = std::bit_cast<float>(0x7FFFFFFFu);
          if (output == GemmOutputType::kBf16) v = sim::bf16_to_fp32(sim::fp32_to_bf16(v));
          expected[r * kOutStride + c] = v;
          negative_zeros += std::bit_cast<std::uint32_t>(v) == 0x80000000u ? 1 : 0;
        }
      }
      if (!with_bias) REQUIRE(negative_zeros > 0);  // the case the rule is about is present
      require_same_bits(expected, out, kOutStride,
                        std::string(output == GemmOutputType::kFp32 ? "fp32" : "bf16") +
                            (with_bias ? " bias" : " no bias"));
    }
  }
}

TEST_CASE("pad_inner_dim changes no bit of any model") {
  // gemm.hpp: the zero padding appends +0 products to the last block; fp32_seq's accumulator is
  // never -0, hopper ignores zero products, the exact sum is unchanged.
  std::mt19937 rng(0x5eed'0004);
  for (const auto& pair : kPairs) {
    for (std::int64_t k : {1, 15, 17, 100, 129, 250}) {
      const auto ta = random_operand(rng, 11, k, ReduceDim::kCols, Format::E4M3, pair.a, false);
      const auto tb = random_operand(rng, 40, k, ReduceDim::kRows, Format::E5M2, pair.b, false);
      const GemmOperand a{ta, ReduceDim::kCols}, b{tb, ReduceDim::kRows};
      for (auto model : {Accumulation::kFp32Seq, Accumulation::kHopperSplitAccumulator,
                         Accumulation::kHopperFastAccum, Accumulation::kExact}) {
        GemmOptions plain;
        plain.accumulation = model;
        GemmOptions padded = plain;
        padded.pad_inner_dim = true;
        const auto expected = sim::gemm(a, b, plain);
        REQUIRE(count_nonzero(expected) > 0);
        require_same_bits(expected, sim::gemm(a, b, padded), 40,
                          std::string("pad ") + sim::to_string(model) + " " + pair.a.name + " x " +
                              pair.b.name + " K=" + std::to_string(k),
                          &ta, &tb);
      }
    }
  }
}

TEST_CASE("GEMM rejects inconsistent operands with a message naming the field") {
  std::mt19937 rng(0x5eed'0005);
  const auto ta = random_operand(rng, 4, 64, ReduceDim::kCols, Format::E4M3, kMx1x32, true);
  const auto tb = random_operand(rng, 4, 64, ReduceDim::kCols, Format::E4M3, kPerTensor, true);
  const GemmOperand a{ta, ReduceDim::kCols}, b{tb, ReduceDim::kCols};
  REQUIRE_THROWS_WITH(sim::gemm(a, {tb, ReduceDim::kRows}, {}), Catch::Contains("disagree on K"));
  auto bad = tb;
  bad.scale_inv.push_back(1.0f);
  REQUIRE_THROWS_WITH(sim::gemm(a, {bad, ReduceDim::kCols}, {}), Catch::Contains("scale_inv"));
  auto bf16 = tb;
  bf16.format = Format::BF16;
  REQUIRE_THROWS_WITH(sim::gemm(a, {bf16, ReduceDim::kCols}, {}), Catch::Contains("e4m3"));
  auto odd_blocks = tb;
  odd_blocks.block_cols = 48;
  odd_blocks.scale_inv.assign(2, 1.0f);
  REQUIRE_THROWS_WITH(sim::gemm(a, {odd_blocks, ReduceDim::kCols}, {}),
                      Catch::Contains("not a multiple"));
  GemmOptions options;
  const std::vector<float> short_bias(3, 1.0f);
  options.bias = short_bias;
  REQUIRE_THROWS_WITH(sim::gemm(a, b, options), Catch::Contains("bias"));
  options = {};
  options.threads = 0;
  REQUIRE_THROWS_WITH(sim::gemm(a, b, options), Catch::Contains("threads"));
  REQUIRE_THROWS_WITH(sim::parse_accumulation("hopper"), Catch::Contains("fp32_seq"));
  REQUIRE(sim::parse_accumulation("hopper_fast_accum") == Accumulation::kHopperFastAccum);
}

}  // namespace
}  // namespace fp8lab::testing
