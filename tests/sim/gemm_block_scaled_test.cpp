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
#include "sim/scaling/mx.hpp"
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

// E4M3 codes: +-2^e (e in [-6, 8]) and the zero.
std::uint8_t e4m3_pow2(int e, bool negative = false) {
  return static_cast<std::uint8_t>((negative ? 0x80 : 0) | ((e + 7) << 3));
}

// Which sums the exact steps of check_exact_steps must have used.
enum class Sums { kAny, kBoth, kFp32 };

// One GEMM on the lanes (with their step counts) and on the scalar reference, on every target:
// the same bits, and `exact` / `general` say whether some micro-tile step took each way.
void check_exact_steps(const BlockScaledOperand& a, const BlockScaledOperand& b,
                       const std::vector<float>& c, bool exact, bool general,
                       const std::string& label, Sums sums = Sums::kAny) {
  BlockScaledGemmOptions options;
  options.c = c;
  options.path = BlockScaledPath::kMxf8f6f4;
  std::vector<float> expected(static_cast<std::size_t>(a.outer * b.outer));
  sim::reference::block_scaled_gemm_into(a, b, options, expected);
  REQUIRE(count_nonzero(expected) > expected.size() / 2);
  for_each_target_and_threads([&](int threads, const std::string& target) {
    INFO(label << " on " << target);
    std::vector<float> lanes(expected.size());
    std::vector<std::uint8_t> left(expected.size(), 0);
    sim::gemm_detail::BlockScaledLaneSteps steps;
    CHECK_FALSE(sim::gemm_detail::block_scaled_lanes(a, b, BlockScaledPath::kMxf8f6f4, c, threads,
                                                     lanes, left, &steps));
    CHECK((steps.exact > 0) == exact);
    CHECK((steps.general > 0) == general);
    if (sums == Sums::kBoth) {  // exact steps with fp32 sums and with fp64 ones
      CHECK(steps.narrow > 0);
      CHECK(steps.narrow < steps.exact);
    }
    if (sums == Sums::kFp32) CHECK(steps.narrow == steps.exact);
    require_same_bits(expected, lanes, b.outer, label + " lanes on " + target);
  });
}

TEST_CASE("mxf8f6f4 lanes: exact steps next to general ones, at each bound's edge") {
  // The lanes add a step exactly (fp64 FMAs, no truncation) only where no term has a bit below
  // the grid 2^(E_max - 25) (Mxf8f6f4Panel's bounds (1)-(4)); each GEMM below has steps or rows
  // just inside a bound and steps or rows one binade past it, where the truncation changes the
  // result (worked out in each comment), every row and column alike so that every micro-tile on
  // every target takes the same way. M = 16 and 32 (whole tiles of 4 and 8 rows), N = 37.
  const std::int64_t n = 37;
  const auto operand = [](const std::vector<std::uint8_t>& codes,
                          const std::vector<std::uint8_t>& scales, std::int64_t outer,
                          std::int64_t k) {
    return BlockScaledOperand{codes, scales, outer, k, Format::E4M3, 32, BlockScaleType::kUe8m0};
  };
  SECTION("(1) U - L <= 25: the lowest product bit on the grid, and one below it") {
    // Per step: a = {2^8, -2^e1}, b = {+-2^8, 2^f}, the rest 0: U = 16, L = e1 + f. Steps 0 and 2
    // have e1 + f = -9 (U - L = 25: -2^-9 is on the grid 2^-9, exact way); steps 1 and 3 have
    // e1 + f = -10 (26): -2^-10 truncates to 0 there (step 1: c = 2^16 - 2^-8 plus -2^16 gives
    // -2^-8, not -2^-8 - 2^-10 as an exact sum would).
    const std::int64_t m = 16, k = 128;
    const int e1[] = {-6, -6, -6, -6}, f[] = {-3, -4, -3, -4};
    std::vector<std::uint8_t> ca(static_cast<std::size_t>(m * k), 0), cb(n * k, 0);
    for (std::int64_t s = 0; s < 4; ++s) {
      for (std::int64_t r = 0; r < m; ++r) {
        ca[r * k + 32 * s] = e4m3_pow2(8);
        ca[r * k + 32 * s + 1] = e4m3_pow2(e1[s], true);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        cb[j * k + 32 * s] = e4m3_pow2(8, s % 2 == 1);
        cb[j * k + 32 * s + 1] = e4m3_pow2(f[s]);
      }
    }
    const std::vector<std::uint8_t> sa(m * 4, 127), sb(n * 4, 127);
    check_exact_steps(operand(ca, sa, m, k), operand(cb, sb, n, k), {}, true, true,
                      "U - L = 25 / 26");
  }
  SECTION("(2) L >= -149: the lowest product bit on fp32's subnormal grid, and one below it") {
    // a = {+-2^0, -2^-6}, b = {2^0, 2^-3}, scales 2^S (a 2^-120, b 2^(S + 120): the fp64 way, the
    // scales being beyond fp32's values): U = S, L = S - 9; the steps' zero products (E = -133)
    // set E_max = -133, grid 2^-158. In units of 2^-149: step 0 has S = -140 (L = -149: exact)
    // and a_0 = -1, a sum of -512 - 1; step 1 has S = -141 (L = -150): c + 256 - 1/2 = -257.5
    // rounds toward zero onto fp32's subnormals (-257), where an exact fp64 sum carried on and
    // rounded to nearest at the end would give -258 (a tie, to even); step 2 is all zeros.
    const std::int64_t m = 16, k = 96;
    std::vector<std::uint8_t> ca(static_cast<std::size_t>(m * k), 0), cb(n * k, 0);
    for (std::int64_t s = 0; s < 2; ++s) {
      for (std::int64_t r = 0; r < m; ++r) {
        ca[r * k + 32 * s] = e4m3_pow2(0, s == 0);
        ca[r * k + 32 * s + 1] = e4m3_pow2(-6, true);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        cb[j * k + 32 * s] = e4m3_pow2(0);
        cb[j * k + 32 * s + 1] = e4m3_pow2(-3);
      }
    }
    std::vector<std::uint8_t> sa(m * 3, 127 - 120), sb(n * 3, 127);
    for (std::int64_t j = 0; j < n; ++j) {
      sb[j * 3] = 127 - 20;      // S = -140
      sb[j * 3 + 1] = 127 - 21;  // S = -141
    }
    check_exact_steps(operand(ca, sa, m, k), operand(cb, sb, n, k), {}, true, true,
                      "L = -149 / -150", Sums::kAny);
    // The fp32 way (scales 2^-70 and 2^(S + 70)): a = {2^0, 2^-6, 2^-6}, b = {2^0, 2^-3, 2^-4}.
    // Step 0, S = -140: 512 + 1 + 1/2 (L = -150) rounds toward zero to 513, where fp32 sums
    // would round the last FMA to nearest, 514 (a tie, to even); step 1, S = -139 (L = -149):
    // exact, c + 1024 + 2 + 1.
    const std::int64_t k2 = 64;
    std::vector<std::uint8_t> ca2(static_cast<std::size_t>(m * k2), 0), cb2(n * k2, 0);
    for (std::int64_t s = 0; s < 2; ++s) {
      for (std::int64_t r = 0; r < m; ++r) {
        ca2[r * k2 + 32 * s] = e4m3_pow2(0);
        ca2[r * k2 + 32 * s + 1] = ca2[r * k2 + 32 * s + 2] = e4m3_pow2(-6);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        cb2[j * k2 + 32 * s] = e4m3_pow2(0);
        cb2[j * k2 + 32 * s + 1] = e4m3_pow2(-3);
        cb2[j * k2 + 32 * s + 2] = e4m3_pow2(-4);
      }
    }
    std::vector<std::uint8_t> sa2(m * 2, 127 - 70), sb2(n * 2);
    for (std::int64_t j = 0; j < n; ++j) {
      sb2[j * 2] = 127 - 70;      // S = -140
      sb2[j * 2 + 1] = 127 - 69;  // S = -139
    }
    check_exact_steps(operand(ca2, sa2, m, k2), operand(cb2, sb2, n, k2), {}, true, true,
                      "L = -150 / -149, fp32", Sums::kFp32);
  }
  SECTION("(3) c on the grid 2^(U - 25) and (4) |c| < 2^(L + 26), and one binade past each") {
    // One step, b = {2^8, 2^-3}. Rows 0-15: a = {2^8, -2^-6}: U = 16, L = -9, the sum
    // 2^16 - 2^-9 plus c; rows 0-7 c = 2^17 - 2^-7 (below 2^(L + 26) = 2^17: exact), rows 8-15
    // c = 2^17 (E_max = 17: -2^-9 truncates to 0 on the grid 2^-8, giving 2^17 + 2^16 where the
    // exact sum rounds to 2^17 + 2^16 - 2^-6). Rows 16-31: a = {2^8, 0}: U = 16, L = 5, the
    // product 2^16 plus c; rows 16-23 c = -2^-9 (on the grid 2^-9: exact), rows 24-31
    // c = -2^-10 (truncates to 0: 2^16, where the exact sum rounds to 2^16 - 2^-8).
    const std::int64_t m = 32, k = 32;
    std::vector<std::uint8_t> ca(static_cast<std::size_t>(m * k), 0), cb(n * k, 0);
    for (std::int64_t r = 0; r < m; ++r) {
      ca[r * k] = e4m3_pow2(8);
      if (r < 16) ca[r * k + 1] = e4m3_pow2(-6, true);
    }
    for (std::int64_t j = 0; j < n; ++j) {
      cb[j * k] = e4m3_pow2(8);
      cb[j * k + 1] = e4m3_pow2(-3);
    }
    const std::vector<std::uint8_t> sa(m, 127), sb(n, 127);
    std::vector<float> c(static_cast<std::size_t>(m * n));
    const float row_c[] = {0x1p17f - 0x1p-7f, 0x1p17f, -0x1p-9f, -0x1p-10f};
    for (std::int64_t r = 0; r < m; ++r) {
      for (std::int64_t j = 0; j < n; ++j) c[r * n + j] = row_c[r / 8];
    }
    check_exact_steps(operand(ca, sa, m, k), operand(cb, sb, n, k), c, true, true,
                      "c at 2^17 / its grid");
  }
}

TEST_CASE("mxf8f6f4 lanes: fp32 sums at U - L = 17, fp64 ones at 18") {
  // Step 0: a = {1.875 x 31, -2^-9 (rows 0-7) or -2^-8 (rows 8-15)}, b = {1.875 x 31, 2^-9}:
  // U = 0 and L = -18 or -17. The 31 products add to X = 6975 2^-6 (13 bits, 2^6 and up) and the
  // last one is -2^-18 or -2^-17: at U - L = 17 the sum X - 2^-17 fits fp32's 24 bits (the fp32
  // way), at 18 it does not: X - 2^-18 rounds toward zero to X - 2^-17 where an fp32 sum would
  // round it to nearest, X (a tie, to even). Step 1 is all zeros. Every step is exact.
  const std::int64_t m = 16, n = 37, k = 64;
  std::vector<std::uint8_t> ca(static_cast<std::size_t>(m * k), 0), cb(n * k, 0);
  constexpr std::uint8_t kE4M3Max1 = 0x3F;  // 1.875
  for (std::int64_t i = 0; i < 31; ++i) {
    for (std::int64_t r = 0; r < m; ++r) ca[r * k + i] = kE4M3Max1;
    for (std::int64_t j = 0; j < n; ++j) cb[j * k + i] = kE4M3Max1;
  }
  for (std::int64_t r = 0; r < m; ++r) ca[r * k + 31] = r < 8 ? 0x81 : 0x82;  // -2^-9, -2^-8
  for (std::int64_t j = 0; j < n; ++j) cb[j * k + 31] = 0x01;                 // 2^-9
  const std::vector<std::uint8_t> sa(m * 2, 127), sb(n * 2, 127);
  const BlockScaledOperand a{ca, sa, m, k, Format::E4M3, 32, BlockScaleType::kUe8m0};
  const BlockScaledOperand b{cb, sb, n, k, Format::E4M3, 32, BlockScaleType::kUe8m0};
  check_exact_steps(a, b, {}, true, false, "U - L = 18 / 17", Sums::kBoth);
  // Scales 2^127 and 2^-127 (products near 1): the fp32 values of one operand would overflow
  // (6 x 2^127), so these steps add in fp64.
  std::mt19937 rng(4647);
  const auto e2m1 = [&](std::int64_t rows) {  // nonzero codes
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(rows * k));
    for (auto& x : codes) x = static_cast<std::uint8_t>(1 + rng() % 7 + 8 * (rng() % 2));
    return codes;
  };
  const auto ea = e2m1(m), eb = e2m1(n);
  const std::vector<std::uint8_t> big(m * 2, 127 + 127), small(n * 2, 0);
  check_exact_steps({ea, big, m, k, Format::E2M1, 32, BlockScaleType::kUe8m0},
                    {eb, small, n, k, Format::E2M1, 32, BlockScaleType::kUe8m0}, {}, true, false,
                    "E2M1 scales 2^127 / 2^-127");
}

TEST_CASE("mxf8f6f4 lanes on MX-quantized normal rows: both ways, the reference's bits") {
  // What a quantizer stores (sim/scaling/mx.hpp, 1 x 32 blocks along K; row standard deviations
  // 2^u, u in [-4, 4]) takes the exact way in many micro-tile steps and the general way in others
  // (random codes take it in nearly all); C is normal values of about the outputs' size with
  // zeros, -0 and, in row 69, a few 2^30, far above them.
  std::mt19937 rng(4646);
  for (const Format format : {Format::E4M3, Format::E2M1, Format::E5M2}) {
    const std::int64_t m = 140, n = 45, k = 256;  // three units of 64 rows: threads share fills
    const auto quantized = [&](std::int64_t rows, float spread) {
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::uniform_real_distribution<float> octave(-spread, spread);
      std::vector<float> x(static_cast<std::size_t>(rows * k));
      for (std::int64_t r = 0; r < rows; ++r) {
        const float sd = std::exp2(octave(rng));
        for (std::int64_t i = 0; i < k; ++i) x[r * k + i] = sd * normal(rng);
      }
      return sim::scaling::quantize_mx(x, rows, k, sim::scaling::ScaleAxis::kRowwise, format).tensor;
    };
    const auto qa = quantized(m, 4.0f), qb = quantized(n, 4.0f);
    const BlockScaledOperand a{qa.data, qa.scale_e8m0, m, k, format, 32, BlockScaleType::kUe8m0};
    const BlockScaledOperand b{qb.data, qb.scale_e8m0, n, k, format, 32, BlockScaleType::kUe8m0};
    for (bool with_c : {false, true}) {
      std::vector<float> c;
      if (with_c) {
        std::normal_distribution<float> normal(0.0f, 16.0f);
        for (std::int64_t i = 0; i < m * n; ++i) {
          const unsigned kind = rng() % 32;
          c.push_back(kind == 0 ? 0.0f : kind == 1 ? -0.0f : normal(rng));
        }
        for (std::int64_t j = 3; j < n; j += 7) c[static_cast<std::size_t>(69 * n + j)] = 0x1p30f;
      }
      BlockScaledGemmOptions options;
      options.c = c;
      options.path = BlockScaledPath::kMxf8f6f4;  // kAuto takes E2M1 x E2M1 to mxf4nvf4
      std::vector<float> expected(static_cast<std::size_t>(m * n));
      sim::reference::block_scaled_gemm_into(a, b, options, expected);
      REQUIRE(count_nonzero(expected) > expected.size() / 2);
      const std::string label = std::string(sim::spec(format).name) +
                                (with_c ? " with c" : " without c");
      for_each_target_and_threads([&](int threads, const std::string& target) {
        INFO(label << " on " << target);
        std::vector<float> lanes(expected.size());
        std::vector<std::uint8_t> left(expected.size(), 0);
        sim::gemm_detail::BlockScaledLaneSteps steps;
        CHECK_FALSE(sim::gemm_detail::block_scaled_lanes(a, b, BlockScaledPath::kMxf8f6f4, c,
                                                         threads, lanes, left, &steps));
        CHECK(steps.exact > 0);
        // E2M1 elements span at most 2^-1..2^2, E2M1 x E2M1 steps fail no bound but (3), (4)
        CHECK((steps.general > 0) == (with_c || format != Format::E2M1));
        require_same_bits(expected, lanes, n, label + " lanes on " + target);
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
