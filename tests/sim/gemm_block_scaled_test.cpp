// The Blackwell block-scaled MMA model (sim/gemm/block_scaled.hpp) on steps worked out by hand:
// what the truncation to 25 / 35 fraction bits and the round toward zero do, zero and special
// terms, and the errors; and its Highway lanes against the scalar reference on random operands,
// on every SIMD target. The bit-exact check against MMA-Sim on 1.2e5 tiles is
// tests/python/test_block_scaled_mmasim.py.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/gemm/block_scaled.hpp"
#include "sim/gemm/block_scaled_lanes.hpp"
#include "tests/sim/gemm_test_support.hpp"

namespace fp8lab::testing {
namespace {

using sim::BlockScaledGemmOptions;
using sim::BlockScaledOperand;
using sim::BlockScaledPath;
using sim::BlockScaleType;

// A 1 x K operand: codes padded with zeros to K, one scale byte per block.
struct Row {
  std::vector<std::uint8_t> codes, scales;
  BlockScaledOperand operand(Format format, std::int64_t block, BlockScaleType type) const {
    return {codes, scales, 1, static_cast<std::int64_t>(codes.size()), format, block, type};
  }
};

Row row(std::int64_t k, std::vector<std::uint8_t> head, std::vector<std::uint8_t> scales) {
  head.resize(static_cast<std::size_t>(k), 0);
  return {head, scales};
}

float mx(const Row& a, Format fa, const Row& b, Format fb, float c = 0.0f) {
  const std::vector<float> cs{c};
  BlockScaledGemmOptions options;
  options.c = cs;
  return sim::block_scaled_gemm(a.operand(fa, 32, BlockScaleType::kUe8m0),
                                b.operand(fb, 32, BlockScaleType::kUe8m0), options)[0];
}

float nvfp4(const Row& a, const Row& b, BlockScaleType type = BlockScaleType::kUe4m3,
            float c = 0.0f) {
  const std::vector<float> cs{c};
  BlockScaledGemmOptions options;
  options.c = cs;
  return sim::block_scaled_gemm(a.operand(Format::E2M1, 16, type),
                                b.operand(Format::E2M1, 16, type), options)[0];
}

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

constexpr std::uint8_t kE4M3One = 0x38, kE4M3OneHalf = 0x3C;  // 1.0, 1.5

TEST_CASE("mxf8f6f4 rounds the step toward zero where fp32 would round up") {
  // c = 1 plus one product 1.5 * 1 * 2^-24 = 3 * 2^-25: the sum keeps it (25 fraction bits),
  // then RZ to fp32 gives 1; RN(1 + 3 * 2^-25) would be 1 + 2^-23.
  const Row a = row(32, {kE4M3OneHalf}, {127 - 24});
  const Row b = row(32, {kE4M3One}, {127});
  CHECK(mx(a, Format::E4M3, b, Format::E4M3, 1.0f) == 1.0f);
  CHECK(mx(a, Format::E4M3, b, Format::E4M3, -1.0f) == -1.0f + 0x1p-23f);  // -1 + 3 * 2^-25
  CHECK(mx(a, Format::E4M3, b, Format::E4M3, -1.0f) != -1.0f);
  // Alone, the product is exact: 1.5 * 2^-24.
  CHECK(mx(a, Format::E4M3, b, Format::E4M3) == 0x1.8p-24f);
}

TEST_CASE("mxf8f6f4 truncates each term to 25 fraction bits of the largest") {
  // c = 2^10 and 32 products of 2^-15 each: on the grid 2^(10 - 25) = 2^-15, so all 32 are kept:
  // 1024 + 2^-10. Products of 2^-16 fall below the grid: all 32 are lost (an exact sum would add
  // 2^-11).
  const Row ones = row(32, std::vector<std::uint8_t>(32, kE4M3One), {127});
  CHECK(mx(row(32, std::vector<std::uint8_t>(32, kE4M3One), {127 - 15}), Format::E4M3, ones,
           Format::E4M3, 1024.0f) == 1024.0f + 0x1p-10f);
  CHECK(mx(row(32, std::vector<std::uint8_t>(32, kE4M3One), {127 - 16}), Format::E4M3, ones,
           Format::E4M3, 1024.0f) == 1024.0f);
}

TEST_CASE("mxf8f6f4 takes FP4 and FP6 elements with their minimum exponents") {
  // E2M1 0.5 (subnormal, code 0x1) times E3M2 0.0625 (subnormal, code 0x01) = 2^-5, scales 2^3.
  CHECK(mx(row(32, {0x1}, {130}), Format::E2M1, row(32, {0x01}, {127}), Format::E3M2) == 0x1p-2f);
  // E2M3 7.5 (0x1F) times E2M1 -6 (0xF): -45.
  CHECK(mx(row(32, {0x1F}, {127}), Format::E2M3, row(32, {0xF}, {127}), Format::E2M1) == -45.0f);
}

TEST_CASE("mxf8f6f4 special terms: NaN scale, Inf elements, overflow to Inf") {
  const Row one = row(32, {kE4M3One}, {127});
  CHECK(bits(mx(row(32, {kE4M3One}, {0xFF}), Format::E4M3, one, Format::E4M3)) == 0x7FFFFFFFu);
  const Row inf = row(32, {0x7C}, {127});  // E5M2 +Inf
  CHECK(mx(inf, Format::E5M2, one, Format::E4M3) == std::numeric_limits<float>::infinity());
  CHECK(bits(mx(inf, Format::E5M2, one, Format::E4M3, -std::numeric_limits<float>::infinity())) ==
        0x7FFFFFFFu);
  // 448 * 448 * 2^127 * 2^127 >= 2^128: Inf, not FLT_MAX (MMA-Sim's conversion).
  const Row big = row(32, {0x7E}, {254});
  CHECK(mx(big, Format::E4M3, big, Format::E4M3) == std::numeric_limits<float>::infinity());
  // A zero sum is +0, also from -0 products and c = -0.
  CHECK(bits(mx(row(32, {0x80}, {127}), Format::E4M3, one, Format::E4M3, -0.0f)) == 0u);
}

TEST_CASE("mxf4nvf4 sums a group of 16 exactly and scales it once") {
  // 16 * 6 * 6 = 576 per group, four groups, UE4M3 scales 1.0 (0x38): 2304.
  const Row six = row(64, std::vector<std::uint8_t>(64, 0x7), {0x38, 0x38, 0x38, 0x38});
  CHECK(nvfp4(six, six) == 2304.0f);
  // UE4M3's sign bit is ignored; 0x7F and 0xFF are NaN.
  const Row neg_scale = row(64, std::vector<std::uint8_t>(64, 0x7), {0xB8, 0xB8, 0xB8, 0xB8});
  CHECK(nvfp4(neg_scale, six) == 2304.0f);
  CHECK(bits(nvfp4(row(64, {0x7}, {0xFF, 0x38, 0x38, 0x38}), six)) == 0x7FFFFFFFu);
  // UE8M0 per 16: 2^(130 - 127) * 2^(127 - 127) * 0.5 * 0.5 = 2.
  CHECK(nvfp4(row(64, {0x1}, {130, 127, 127, 127}), row(64, {0x1}, {127, 127, 127, 127}),
              BlockScaleType::kUe8m0) == 2.0f);
}

TEST_CASE("mxf4nvf4: a group that cancels to 0 still sets the alignment exponent") {
  // Group 1: 0.5 * 0.5 with both scales 0x01 (2^-9): 2^-20. Group 0 cancels (6*6 - 6*6) under
  // scales 448 (0x7E, exponent 8 each), so E_max = 16 and the grid 2^(16 - 35) drops 2^-20.
  std::vector<std::uint8_t> a(64, 0), b(64, 0);
  a[0] = 0x7;
  a[1] = 0xF;  // 6, -6
  b[0] = b[1] = 0x7;
  a[16] = b[16] = 0x1;  // 0.5
  const Row ra = row(64, a, {0x7E, 0x01, 0x38, 0x38});
  const Row rb = row(64, b, {0x7E, 0x01, 0x38, 0x38});
  CHECK(nvfp4(ra, rb) == 0.0f);
  // With group 0 all zero (-139) instead, nothing is dropped.
  a[0] = a[1] = 0;
  CHECK(nvfp4(row(64, a, {0x7E, 0x01, 0x38, 0x38}), rb) == 0x1p-20f);
  // A zero scale makes its group a zero term too.
  a[0] = 0x7;
  a[1] = 0x7;
  CHECK(nvfp4(row(64, a, {0x00, 0x01, 0x38, 0x38}), rb) == 0x1p-20f);
}

TEST_CASE("block_scaled_gemm: bits do not depend on the thread count, C chains the steps") {
  std::mt19937 rng(7);
  const std::int64_t m = 9, n = 5, k = 128;
  std::vector<std::uint8_t> ca(m * k), cb(n * k), sa(m * k / 16), sb(n * k / 16);
  for (auto& x : ca) x = static_cast<std::uint8_t>(rng() % 16);
  for (auto& x : cb) x = static_cast<std::uint8_t>(rng() % 16);
  for (auto& x : sa) x = static_cast<std::uint8_t>(0x30 + rng() % 16);
  for (auto& x : sb) x = static_cast<std::uint8_t>(0x30 + rng() % 16);
  const BlockScaledOperand a{ca, sa, m, k, Format::E2M1, 16, BlockScaleType::kUe4m3};
  const BlockScaledOperand b{cb, sb, n, k, Format::E2M1, 16, BlockScaleType::kUe4m3};
  BlockScaledGemmOptions options;
  const std::vector<float> one = sim::block_scaled_gemm(a, b, options);
  options.threads = 3;
  require_same_bits(one, sim::block_scaled_gemm(a, b, options), n, "threads 3 vs 1");
  // The second half of K started from the first half's result as C gives the same bits.
  std::vector<std::uint8_t> ha(m * 64), hb(n * 64), ta(m * 64), tb(n * 64);
  std::vector<std::uint8_t> hsa(m * 4), hsb(n * 4), tsa(m * 4), tsb(n * 4);
  for (std::int64_t r = 0; r < m; ++r) {
    for (int i = 0; i < 64; ++i)
      ha[r * 64 + i] = ca[r * k + i], ta[r * 64 + i] = ca[r * k + 64 + i];
    for (int i = 0; i < 4; ++i) hsa[r * 4 + i] = sa[r * 8 + i], tsa[r * 4 + i] = sa[r * 8 + 4 + i];
  }
  for (std::int64_t r = 0; r < n; ++r) {
    for (int i = 0; i < 64; ++i)
      hb[r * 64 + i] = cb[r * k + i], tb[r * 64 + i] = cb[r * k + 64 + i];
    for (int i = 0; i < 4; ++i) hsb[r * 4 + i] = sb[r * 8 + i], tsb[r * 4 + i] = sb[r * 8 + 4 + i];
  }
  const auto first =
      sim::block_scaled_gemm({ha, hsa, m, 64, Format::E2M1, 16, BlockScaleType::kUe4m3},
                             {hb, hsb, n, 64, Format::E2M1, 16, BlockScaleType::kUe4m3}, {});
  BlockScaledGemmOptions chained;
  chained.c = first;
  require_same_bits(
      one,
      sim::block_scaled_gemm({ta, tsa, m, 64, Format::E2M1, 16, BlockScaleType::kUe4m3},
                             {tb, tsb, n, 64, Format::E2M1, 16, BlockScaleType::kUe4m3}, chained),
      n, "K = 128 vs two chained K = 64");
}

// Random operands for the lanes-vs-reference comparison: codes of every kind (a NaN or Inf code
// in a few rows only, so that most outputs stay on the lanes), scale bytes from 2^-127 to 2^127
// (tiny sums round toward zero onto fp32's subnormals, huge ones overflow to Inf), a few NaN
// scales, and C with zeros, subnormals, huge values and a few NaN/Inf.
struct RandomCase {
  std::vector<std::uint8_t> ca, cb, sa, sb;
  std::vector<float> c;
  BlockScaledOperand a, b;
};

std::vector<std::uint8_t> random_codes(std::mt19937& rng, std::int64_t rows, std::int64_t k,
                                       Format format) {
  const int codes = 1 << sim::spec(format).total_bits();
  std::vector<std::uint8_t> finite;
  for (int c = 0; c < codes; ++c) {
    if (std::isfinite(sim::decode_element(static_cast<std::uint8_t>(c), format))) {
      finite.push_back(static_cast<std::uint8_t>(c));
    }
  }
  std::vector<std::uint8_t> out(static_cast<std::size_t>(rows * k));
  for (std::int64_t r = 0; r < rows; ++r) {
    const bool any_code = rng() % 8 == 0;  // this row may hold NaN / Inf codes
    for (std::int64_t i = 0; i < k; ++i) {
      std::uint8_t code = rng() % 4 == 0 ? std::uint8_t{0} : finite[rng() % finite.size()];
      if (any_code && rng() % 16 == 0) code = static_cast<std::uint8_t>(rng() % codes);
      out[static_cast<std::size_t>(r * k + i)] = code;
    }
  }
  return out;
}

std::vector<std::uint8_t> random_scales(std::mt19937& rng, std::size_t count, BlockScaleType type,
                                        int spread) {
  std::vector<std::uint8_t> out(count);
  std::normal_distribution<double> normal(0.0, spread);
  for (auto& x : out) {
    if (type == BlockScaleType::kUe4m3) {
      x = static_cast<std::uint8_t>(rng() % 256);  // sign bit ignored, 0x7F / 0xFF NaN
      if ((x & 0x7F) == 0x7F && rng() % 4 != 0) x = 0x38;
      continue;
    }
    const double byte = std::clamp(127.0 + std::round(normal(rng)), 0.0, 254.0);
    x = rng() % 200 == 0 ? std::uint8_t{0xFF} : static_cast<std::uint8_t>(byte);
  }
  return out;
}

RandomCase random_case(std::mt19937& rng, std::int64_t m, std::int64_t n, std::int64_t k, Format fa,
                       Format fb, std::int64_t block, BlockScaleType type, int spread,
                       bool with_c) {
  RandomCase t;
  t.ca = random_codes(rng, m, k, fa);
  t.cb = random_codes(rng, n, k, fb);
  t.sa = random_scales(rng, static_cast<std::size_t>(m * k / block), type, spread);
  t.sb = random_scales(rng, static_cast<std::size_t>(n * k / block), type, spread);
  if (with_c) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    t.c.resize(static_cast<std::size_t>(m * n));
    for (auto& x : t.c) {
      const unsigned kind = rng() % 64;
      x = std::ldexp(normal(rng), static_cast<int>(rng() % 41) - 20);
      if (kind == 0) x = 0.0f;
      if (kind == 1) x = -0.0f;
      if (kind == 2) x = std::numeric_limits<float>::denorm_min() * static_cast<float>(rng() % 999);
      if (kind == 3) x = std::ldexp(normal(rng), 126);
      if (kind == 4) x = std::numeric_limits<float>::quiet_NaN();
      if (kind == 5) x = -std::numeric_limits<float>::infinity();
    }
  }
  t.a = {t.ca, t.sa, m, k, fa, block, type};
  t.b = {t.cb, t.sb, n, k, fb, block, type};
  return t;
}

TEST_CASE("block_scaled_gemm's lanes give the scalar reference's bits, every target") {
  struct Kind {
    Format fa, fb;
    std::int64_t block;
    BlockScaleType type;
  };
  const Kind kinds[] = {
      {Format::E4M3, Format::E4M3, 32, BlockScaleType::kUe8m0},
      {Format::E5M2, Format::E4M3, 32, BlockScaleType::kUe8m0},
      {Format::E2M1, Format::E3M2, 32, BlockScaleType::kUe8m0},
      {Format::E2M3, Format::E5M2, 32, BlockScaleType::kUe8m0},
      {Format::E2M1, Format::E2M1, 16, BlockScaleType::kUe4m3},  // NVFP4: mxf4nvf4
      {Format::E2M1, Format::E2M1, 16, BlockScaleType::kUe8m0},
      {Format::E2M1, Format::E2M1, 32, BlockScaleType::kUe8m0},  // MXFP4 on mxf4nvf4
  };
  std::mt19937 rng(46);
  for (const Kind& kind : kinds) {
    // M and N not multiples of a micro-tile or a vector; K = 96 ends on a part of a 64-step.
    for (std::int64_t k : {96, 256}) {
      for (int spread : {4, 30}) {
        for (bool with_c : {false, true}) {
          const RandomCase t =
              random_case(rng, 13, 37, k, kind.fa, kind.fb, kind.block, kind.type, spread, with_c);
          BlockScaledGemmOptions options;
          options.c = t.c;
          std::vector<float> expected(13 * 37);
          sim::reference::block_scaled_gemm_into(t.a, t.b, options, expected);
          REQUIRE(count_nonzero(expected) > expected.size() / 4);
          const std::string label = std::string(sim::spec(kind.fa).name) + " x " +
                                    sim::spec(kind.fb).name + " block " +
                                    std::to_string(kind.block) + " k " + std::to_string(k) +
                                    " spread " + std::to_string(spread) + (with_c ? " c" : "");
          for_each_target_and_threads([&](int threads, const std::string& target) {
            INFO(label << " on " << target);
            REQUIRE(std::string(sim::block_scaled_target_name()) ==
                    target.substr(0, target.find(' ')));
            options.threads = threads;
            // The lanes alone: every output they do not leave has the reference's bits, and
            // they leave few (a case they all left would compare nothing).
            std::vector<float> lanes(expected.size());
            std::vector<std::uint8_t> left(expected.size(), 0);
            const auto path = sim::resolve_block_scaled_path(t.a, t.b, options.path);
            sim::gemm_detail::block_scaled_lanes(t.a, t.b, path, options.c, threads, lanes, left);
            std::size_t kept = 0;
            for (std::size_t i = 0; i < lanes.size(); ++i) {
              if (left[i] != 0) lanes[i] = expected[i];
              kept += left[i] == 0 ? 1 : 0;
            }
            CHECK(kept > expected.size() / 4);
            require_same_bits(expected, lanes, 37, label + " lanes on " + target);
            require_same_bits(expected, sim::block_scaled_gemm(t.a, t.b, options), 37,
                              label + " on " + target);
          });
        }
      }
    }
  }
}

TEST_CASE("block_scaled_gemm's lanes at the edges of folding values with their scales") {
  // UE8M0 E2M1 x E2M1 (mxf4nvf4) with scale exponents drawn from [lo, hi] per operand, each
  // bound taken at least once: the lanes fold the values with their scales when both operands'
  // lowest exponents sum to >= -110 and their highest to <= 115 (each <= 120). On both sides of
  // each bound the bits are the reference's, with and without C of about the products' size.
  struct Edge {
    int a_lo, a_hi, b_lo, b_hi;
    bool folds;
  };
  const Edge edges[] = {
      {-55, -45, -55, -40, true}, {-56, -45, -55, -40, false}, {50, 57, 40, 58, true},
      {50, 58, 40, 58, false},    {100, 120, -20, -5, true},   {100, 121, -20, -6, false},
      {-110, -100, 0, 5, true},   {-111, -100, 0, 5, false},
  };
  std::mt19937 rng(4604);
  const std::int64_t m = 13, n = 37, k = 96;
  const auto scales = [&](std::int64_t rows, int lo, int hi) {
    std::vector<std::uint8_t> s(static_cast<std::size_t>(rows * k / 32));
    for (auto& x : s)
      x = static_cast<std::uint8_t>(127 + lo + static_cast<int>(rng() % (hi - lo + 1)));
    s.front() = static_cast<std::uint8_t>(127 + lo);
    s.back() = static_cast<std::uint8_t>(127 + hi);
    return s;
  };
  for (const Edge& e : edges) {
    const auto ca = random_codes(rng, m, k, Format::E2M1),
               cb = random_codes(rng, n, k, Format::E2M1);
    const auto sa = scales(m, e.a_lo, e.a_hi), sb = scales(n, e.b_lo, e.b_hi);
    const BlockScaledOperand a{ca, sa, m, k, Format::E2M1, 32, BlockScaleType::kUe8m0};
    const BlockScaledOperand b{cb, sb, n, k, Format::E2M1, 32, BlockScaleType::kUe8m0};
    const std::string label = "a [" + std::to_string(e.a_lo) + ", " + std::to_string(e.a_hi) +
                              "] b [" + std::to_string(e.b_lo) + ", " + std::to_string(e.b_hi) +
                              "]";
    INFO(label);
    CHECK(sim::gemm_detail::block_scaled_folds(a, b) == e.folds);
    for (bool with_c : {false, true}) {
      std::vector<float> c;
      if (with_c) {
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const int at = (e.a_lo + e.b_lo + e.a_hi + e.b_hi) / 2;
        for (std::int64_t i = 0; i < m * n; ++i) c.push_back(std::ldexp(normal(rng), at));
      }
      BlockScaledGemmOptions options;
      options.c = c;
      std::vector<float> expected(static_cast<std::size_t>(m * n));
      sim::reference::block_scaled_gemm_into(a, b, options, expected);
      REQUIRE(count_nonzero(expected) > expected.size() / 4);
      for_each_target_and_threads([&](int threads, const std::string& target) {
        options.threads = threads;
        require_same_bits(expected, sim::block_scaled_gemm(a, b, options), n,
                          label + (with_c ? " c" : "") + " on " + target);
      });
    }
  }
}

TEST_CASE("block_scaled_gemm names the bad field") {
  const Row one = row(32, {kE4M3One}, {127});
  const auto e4m3 = one.operand(Format::E4M3, 32, BlockScaleType::kUe8m0);
  CHECK_THROWS_WITH(
      sim::block_scaled_gemm(one.operand(Format::E4M3, 32, BlockScaleType::kUe4m3), e4m3, {}),
      Catch::Contains("mxf8f6f4 path takes UE8M0 scales per 32"));
  const Row bad = row(32, {0x10}, {127});
  CHECK_THROWS_WITH(
      sim::block_scaled_gemm(bad.operand(Format::E2M1, 32, BlockScaleType::kUe8m0), e4m3, {}),
      Catch::Contains("a.codes[0] = 16 is not an e2m1 code"));
  BlockScaledGemmOptions nvf4;
  nvf4.path = BlockScaledPath::kMxf4Nvf4;
  CHECK_THROWS_WITH(sim::block_scaled_gemm(e4m3, e4m3, nvf4),
                    Catch::Contains("mxf4nvf4 path takes E2M1 operands only"));
  CHECK_THROWS_WITH(
      sim::block_scaled_gemm(one.operand(Format::E4M3, 16, BlockScaleType::kUe8m0), e4m3, {}),
      Catch::Contains("a.scales has 1 bytes, expected outer * k / block = 2"));
  sim::GemmOptions options;
  options.accumulation = sim::parse_accumulation("blackwell_block");
  const auto t = per_tensor(1, 1, Format::E4M3, {kE4M3One});
  // sim::gemm runs blackwell_block on block-scaled operands only; a per-tensor one is refused
  // with what the model takes.
  CHECK_THROWS_WITH(sim::gemm({t, ReduceDim::kCols}, {t, ReduceDim::kCols}, options),
                    Catch::Contains("gemm (blackwell_block): operand A: needs MX (E8M0 scales) or "
                                    "NVFP4 (E4M3 scales) blocks of 16 or 32 along K"));
}

}  // namespace
}  // namespace fp8lab::testing
