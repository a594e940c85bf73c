// Tseng et al.'s MXFP4 backward (sim/scaling/mx_dither.hpp) against a reference written from
// their code, step by step as the Python spells it: amazon-science/mxfp4-llm at 0cc57fe
// (Megatron-LM.patch: S = (had.T * signs).T, grad_output.reshape(-1, HBS) @ S,
// weight.T.reshape(-1, HBS) @ S then .T) and microxcaling at 7bc4195 with its patch (_quantize_mx
// 'dither_scale': _shared_exponents, 3 * A / 2**(shared_exp + 2), _quantize_elemwise_core with
// _round_mantissa 'dither', * 2**(shared_exp + 2) / 3). The reference returns their dequantized
// fp32 values; sim's codes and E8M0 bytes, dequantized by that same last line, must equal them
// bit for bit, given the same uniforms.
#include <hwy/targets.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/cast.hpp"
#include "sim/rng.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/mx_dither.hpp"
#include "sim/transposed.hpp"

namespace fp8lab::sim::scaling {
namespace {

constexpr float kFp32MinNormal = 0x1p-126f;

float bf16(float x) { return bf16_to_fp32(fp32_to_bf16(x)); }

// ---- the reference, from their code -----------------------------------------------------------

// _shared_exponents(method="max", ebits=0) then `shared_exp - emax`, clamped as _quantize_mx does
// (above 127: NaN; below -127: -127). fp4_e2m1: ebits 2, mbits 3, emax 2, max_norm 6.
float ref_shared_exp(const std::vector<float>& block) {
  float amax = 0.0f;
  for (float v : block) amax = std::max(amax, std::fabs(v));
  const float with_floor = amax + kFp32MinNormal * (amax == 0.0f ? 1.0f : 0.0f);
  float e = static_cast<float>(std::floor(std::log2(static_cast<double>(with_floor)))) - 2.0f;
  if (e > 127.0f) e = std::numeric_limits<float>::quiet_NaN();
  if (e < -127.0f) e = -127.0f;
  return e;
}

// _quantize_elemwise_core(A, bits=3, exp_bits=2, max_norm=6, round='dither',
// saturate_normals=True, allow_denorm=True) on one element with its rand_like value.
float ref_elemwise_dither(float a, float rand) {
  float private_exp = std::floor(std::log2(std::fabs(a) + (a == 0.0f ? 1.0f : 0.0f)));
  const float min_exp = -(1 << (2 - 1)) + 2;  // -(2**(exp_bits-1)) + 2 = 0
  private_exp = std::max(private_exp, min_exp);
  float out = a / std::exp2(private_exp) * std::exp2(1.0f);  // _safe_lshift(out, bits - 2, exp)
  const float sign = a > 0.0f ? 1.0f : (a < 0.0f ? -1.0f : 0.0f);  // torch.sign
  out = sign * std::floor(std::fabs(out) + rand);                  // _round_mantissa 'dither'
  out = out / std::exp2(1.0f) * std::exp2(private_exp);            // _safe_rshift
  return std::clamp(out, -6.0f, 6.0f);
}

// _quantize_mx(..., round='dither_scale') on one block: the dequantized values.
std::vector<float> ref_dither_scale_block(const std::vector<float>& block,
                                          const std::vector<float>& rand) {
  const float se = ref_shared_exp(block);
  std::vector<float> out(block.size());
  for (std::size_t i = 0; i < block.size(); ++i) {
    float a = 3.0f * block[i] / std::exp2(se + 2.0f);
    a = ref_elemwise_dither(a, rand[i]);
    out[i] = a * std::exp2(se + 2.0f) / 3.0f;
  }
  return out;
}

// scipy.linalg.hadamard(64): H_1 = [1], H_2n = [[H_n, H_n], [H_n, -H_n]].
std::vector<std::vector<float>> hadamard64() {
  std::vector<std::vector<float>> h{{1.0f}};
  while (h.size() < 64) {
    const std::size_t n = h.size();
    std::vector<std::vector<float>> next(2 * n, std::vector<float>(2 * n));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        next[i][j] = next[i][j + n] = next[i + n][j] = h[i][j];
        next[i + n][j + n] = -h[i][j];
      }
    }
    h = std::move(next);
  }
  return h;
}

// (m.reshape(-1, 64) @ S) for a row-major [lines, k] matrix m, S = (had.T * signs).T with had =
// hadamard(64) / 8 and signs from the mask (bit i: -1); bf16 operands, fp32 sums in index order,
// bf16 result.
std::vector<float> ref_rht_rows(const std::vector<float>& m, std::int64_t lines, std::int64_t k,
                                std::uint64_t mask) {
  const auto h = hadamard64();
  std::vector<std::vector<float>> s(64, std::vector<float>(64));
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 64; ++j) {
      const float had_t = bf16(h[j][i] / 8.0f);                   // had.T[i][j]
      const float sign = ((mask >> j) & 1u) != 0 ? -1.0f : 1.0f;  // had.T * signs: column j
      s[j][i] = bf16(had_t * sign);                               // (...).T
    }
  }
  std::vector<float> out(m.size());
  for (std::int64_t r = 0; r < lines * k / 64; ++r) {
    for (int j = 0; j < 64; ++j) {
      float sum = 0.0f;
      for (int i = 0; i < 64; ++i) sum += bf16(m[static_cast<std::size_t>(r * 64 + i)]) * s[i][j];
      out[static_cast<std::size_t>(r * 64 + j)] = bf16(sum);
    }
  }
  return out;
}

// ---- inputs ---------------------------------------------------------------------------------

std::vector<float> gaussian_tensor(std::int64_t n, std::uint32_t seed, bool wide) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> binade(-40, 40);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = normal(gen) * (wide ? std::ldexp(1.0f, binade(gen)) : 1.0f);
  // Blocks the rule treats apart: zeros, a -0.0, subnormals, a block maximum just below a power
  // of two, exact grid points.
  x[0] = 0.0f;
  x[1] = -0.0f;
  x[2] = 1e-40f;
  x[3] = -3e-41f;
  x[5] = std::nextafter(4.0f, 0.0f);
  x[6] = 6.0f;
  x[7] = -1.5f;
  for (int i = 32; i < 64; ++i) x[static_cast<std::size_t>(i)] = 0.0f;  // an all-zero block
  return x;
}

// Their dequantized value of sim's code and E8M0 byte: q * 2**(shared_exp + 2) / 3.
float dequantize_like_theirs(std::uint8_t code, std::uint8_t e8m0) {
  const float q = decode_subbyte(code, Format::E2M1);
  return q * std::exp2(static_cast<float>(static_cast<int>(e8m0) - 127) + 2.0f) / 3.0f;
}

// ||dY W - dY_t W_t|| / ||dY W|| in float64, dY [tokens x out], W [out x in]: the transformed
// pair's product against the plain one (S S^T = I makes it small, a different draw large).
double product_error(const std::vector<float>& dy, const std::vector<float>& w,
                     const std::vector<float>& dy_t, const std::vector<float>& w_t,
                     std::int64_t tokens, std::int64_t out_features, std::int64_t in_features) {
  double err = 0.0, norm = 0.0;
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t c = 0; c < in_features; ++c) {
      double exact = 0.0, transformed = 0.0;
      for (std::int64_t o = 0; o < out_features; ++o) {
        const auto a = static_cast<std::size_t>(t * out_features + o);
        const auto b = static_cast<std::size_t>(o * in_features + c);
        exact += static_cast<double>(dy[a]) * static_cast<double>(w[b]);
        transformed += static_cast<double>(dy_t[a]) * static_cast<double>(w_t[b]);
      }
      err += (exact - transformed) * (exact - transformed);
      norm += exact * exact;
    }
  }
  return std::sqrt(err / norm);
}

// Runs body once per SIMD target Highway compiled into sim/scaling/mx_dither_lanes.cpp and this
// CPU supports, checking that the dispatcher switched (INFO names the target in failures).
template <typename Body>
void for_each_target(Body body) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    INFO("target " << hwy::TargetName(target));
    REQUIRE(std::string(mx_dither_target_name()) == hwy::TargetName(target));
    body();
  }
  hwy::SetSupportedTargetsForTest(0);
}

struct DitherCounts {
  std::int64_t compared = 0, rounded_up = 0, rounded_down = 0, special_blocks = 0, overflowing = 0;
};

// quantize_mx_dither_scale(x) against the reference block by block (partial edge blocks too).
// Blocks holding a NaN or Inf (not modelled: their scale code is 255, scales NaN, codes 0) and
// elements whose 3 x overflows (the code of +-6) are checked as mx_dither.hpp states instead.
// Also checks amax (NaN-ignoring) and the underflowed count (nonzero x whose value is +-0).
DitherCounts check_dither_scale(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                                ScaleAxis axis, const StochasticStream& stream) {
  const QuantizeResult got = quantize_mx_dither_scale(x, rows, cols, axis, stream);
  REQUIRE(got.tensor.data.size() == x.size());
  const bool along_cols = axis == ScaleAxis::kRowwise;
  DitherCounts n;
  std::uint64_t underflowed = 0;
  float amax = 0.0f;
  const std::int64_t lines = along_cols ? rows : cols, k = along_cols ? cols : rows;
  for (std::int64_t line = 0; line < lines; ++line) {
    for (std::int64_t b0 = 0; b0 < k; b0 += 32) {
      std::vector<float> block, rand;
      std::vector<std::size_t> index;
      bool special = false;
      for (std::int64_t t = b0; t < std::min(k, b0 + 32); ++t) {
        const auto i = static_cast<std::size_t>(along_cols ? line * cols + t : t * cols + line);
        index.push_back(i);
        block.push_back(x[i]);
        rand.push_back(mx_dither_uniform(stream.seed, stream.stream, i));
        special = special || !std::isfinite(x[i]);
        if (!std::isnan(x[i])) amax = std::max(amax, std::fabs(x[i]));
      }
      const std::size_t scale_index = static_cast<std::size_t>(
          along_cols ? line * ((cols + 31) / 32) + b0 / 32 : (b0 / 32) * cols + line);
      const std::uint8_t e8m0 = got.tensor.scale_e8m0[scale_index];
      INFO("line " << line << " block at " << b0 << " axis " << to_string(axis));
      if (special) {
        ++n.special_blocks;
        CHECK(e8m0 == 0xFF);
        CHECK(std::isnan(got.tensor.scale_inv[scale_index]));
        CHECK(std::isnan(got.tensor.scale[scale_index]));
        for (const std::size_t i : index) CHECK(got.tensor.data[i] == 0);
        continue;
      }
      const std::vector<float> want = ref_dither_scale_block(block, rand);
      CHECK(static_cast<float>(e8m0) - 127.0f == ref_shared_exp(block));
      CHECK(got.tensor.scale_inv[scale_index] == std::ldexp(4.0f / 3.0f, e8m0 - 127));
      CHECK(got.tensor.scale[scale_index] == std::ldexp(0.75f, 127 - e8m0));
      for (std::size_t j = 0; j < block.size(); ++j) {
        const std::uint8_t code = got.tensor.data[index[j]];
        INFO("x = " << block[j] << " u = " << rand[j]);
        if (std::fabs(block[j]) > std::numeric_limits<float>::max() / 3.0f) {
          ++n.overflowing;
          CHECK(code == (block[j] < 0.0f ? 0xF : 0x7));
          continue;
        }
        const float mine = dequantize_like_theirs(code, e8m0);
        CHECK(std::bit_cast<std::uint32_t>(mine) == std::bit_cast<std::uint32_t>(want[j]));
        ++n.compared;
        if (block[j] != 0.0f && want[j] == 0.0f) ++underflowed;
        if (std::fabs(want[j]) > std::fabs(block[j])) ++n.rounded_up;
        if (std::fabs(want[j]) < std::fabs(block[j])) ++n.rounded_down;
      }
    }
  }
  CHECK(got.stats.underflowed == underflowed);
  CHECK(got.stats.amax == amax);
  CHECK(got.tensor.global_scale[0] == amax);
  CHECK(got.stats.count == x.size());
  return n;
}

TEST_CASE("dither_scale equals the reference from their code, bit for bit, every target",
          "[mx_dither]") {
  // 64 x 96: whole blocks both ways; 70 x 100: a partial last block on each axis, and 100
  // columns leave a tail of columns after the vectors of every target.
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{64, 96}, {70, 100}};
  for_each_target([&] {
    for (const auto& [rows, cols] : shapes) {
      for (const bool wide : {false, true}) {
        for (const ScaleAxis axis : {ScaleAxis::kRowwise, ScaleAxis::kColumnwise}) {
          INFO(rows << " x " << cols << (wide ? " wide" : ""));
          const auto x = gaussian_tensor(rows * cols, wide ? 7u : 3u, wide);
          const DitherCounts n = check_dither_scale(x, rows, cols, axis, StochasticStream{11, 5});
          CHECK(n.compared == rows * cols);
          CHECK(n.rounded_up > n.compared / 50);  // the draws round up as well as down
          CHECK(n.rounded_down > n.compared / 50);
        }
      }
    }
  });
}

TEST_CASE("dither_scale's NaN and Inf blocks, amax and an overflowing 3 x, every target",
          "[mx_dither]") {
  const std::int64_t rows = 70, cols = 100;
  std::vector<float> x = gaussian_tensor(rows * cols, 9, true);
  const auto at = [&](std::int64_t r, std::int64_t c) -> float& {
    return x[static_cast<std::size_t>(r * cols + c)];
  };
  at(3, 40) = std::numeric_limits<float>::quiet_NaN();   // a whole row block and column block
  at(69, 99) = std::numeric_limits<float>::quiet_NaN();  // partial blocks on both axes
  at(10, 5) = 3e38f;                                     // 3 x overflows: the code of +6
  at(12, 7) = -2e38f;                                    // ... and of -6
  for_each_target([&] {
    for (const ScaleAxis axis : {ScaleAxis::kRowwise, ScaleAxis::kColumnwise}) {
      std::vector<float> y = x;
      // NaNs only: amax ignores them.
      DitherCounts n = check_dither_scale(y, rows, cols, axis, StochasticStream{4, 2});
      CHECK(n.special_blocks == 2);
      CHECK(n.overflowing == 2);
      CHECK(n.compared > rows * cols - 70);
      // And a -Inf, whose block is special too; amax is then Inf.
      y[static_cast<std::size_t>(40 * cols + 70)] = -std::numeric_limits<float>::infinity();
      n = check_dither_scale(y, rows, cols, axis, StochasticStream{4, 2});
      CHECK(n.special_blocks == 3);
    }
  });
}

TEST_CASE("dither_scale never clips and is unbiased over draws", "[mx_dither]") {
  // One block whose maximum sits just below the next E8M0 step (the case a plain E8M0 floor scale
  // clips at 6): its dequantized mean over many streams is x.
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i)
    x[static_cast<std::size_t>(i)] = -7.9f + 0.5f * static_cast<float>(i);
  x[31] = 7.99f;
  constexpr int kDraws = 4000;
  std::vector<double> sum(32, 0.0);
  for (int d = 0; d < kDraws; ++d) {
    const StochasticStream stream{1, static_cast<std::uint64_t>(d)};
    const QuantizeResult q = quantize_mx_dither_scale(x, 1, 32, ScaleAxis::kRowwise, stream);
    REQUIRE(q.tensor.scale_e8m0[0] == 127);  // floor(log2 7.99) - 2 = 0
    for (int i = 0; i < 32; ++i) {
      const auto j = static_cast<std::size_t>(i);
      sum[j] += static_cast<double>(decode_subbyte(q.tensor.data[j], Format::E2M1)) *
                static_cast<double>(q.tensor.scale_inv[0]);
    }
  }
  for (int i = 0; i < 32; ++i) {
    const auto j = static_cast<std::size_t>(i);
    // The grid step around |x| <= 8 is at most 2 * 4/3; the mean of kDraws draws has a standard
    // deviation below 1.34 / sqrt(4000) = 0.021.
    INFO("x = " << x[j]);
    CHECK(std::fabs(sum[j] / kDraws - static_cast<double>(x[j])) < 0.11);
  }
}

// mx_rht_bf16 against the reference, bit for bit (NaNs included: both give bf16's canonical NaN).
void check_rht(const std::vector<float>& x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
               std::uint64_t mask) {
  std::vector<float> got(x.size());
  mx_rht_bf16(x, rows, cols, axis, mask, got);
  const auto want =
      axis == ScaleAxis::kRowwise
          ? ref_rht_rows(x, rows, cols, mask)
          : transposed(ref_rht_rows(transposed(x, rows, cols), cols, rows, mask), cols, rows);
  std::size_t mismatches = 0, first = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(got[i]) != std::bit_cast<std::uint32_t>(want[i]) &&
        mismatches++ == 0) {
      first = i;
    }
  }
  INFO(rows << " x " << cols << " " << to_string(axis) << ": first mismatch at " << first << ": "
            << got[first] << ", reference " << want[first]);
  CHECK(mismatches == 0);
}

TEST_CASE("the 64-point RHT equals their reshape @ S along each backward GEMM's K, every target",
          "[mx_dither]") {
  const std::uint64_t mask = mx_rht_sign_mask(3, 9, 0);
  // dgrad: grad_output [tokens, out] in chunks along out (its rows: kRowwise) and the weight
  // [out, in] through weight.T.reshape(-1, HBS) @ S, then .T: chunks down its columns
  // (kColumnwise).
  const std::int64_t tokens = 8, out_features = 128, in_features = 64;
  const auto dy = gaussian_tensor(tokens * out_features, 21, false);
  const auto w = gaussian_tensor(out_features * in_features, 22, true);
  // Values the sums treat apart, in a tensor whose 37 columns leave a tail after the vectors of
  // every target: NaN, +-Inf (an Inf - Inf sum is NaN), terms whose sum overflows to Inf,
  // subnormals (bf16-rounded, times 1/8: rounded again), and fp32 values that round up to a
  // larger bf16 power of two.
  std::vector<float> z = gaussian_tensor(128 * 37, 23, true);
  const auto set = [&](std::int64_t r, std::int64_t c, float v) {
    z[static_cast<std::size_t>(r * 37 + c)] = v;
  };
  set(70, 3, std::numeric_limits<float>::quiet_NaN());
  set(5, 36, std::numeric_limits<float>::infinity());
  set(9, 36, -std::numeric_limits<float>::infinity());
  set(80, 35, std::numeric_limits<float>::infinity());
  for (int r = 0; r < 64; ++r) set(r, 20, 3e38f);  // a column chunk whose sums overflow
  for (int r = 64; r < 128; ++r) set(r, 21, 1e-41f * static_cast<float>(r));
  set(100, 22, std::nextafter(2.0f, 0.0f));
  // Chunks whose fp32 sums depend on the order of the terms: x_p = x_{p+1} = 2^30, x_{p+2} = 1,
  // zeros elsewhere (p = 0..61). Where the two large terms cancel (half of the outputs, whatever
  // the signs), the sum in index order is 2^27 - 2^27 + 1/8 = 1/8; any order that adds the 1/8
  // before the second large term (a swap of terms p + 1 and p + 2, a reversal) loses it in
  // 2^27 + 1/8 and gives 0. Column c holds the chunk p = c % 62, and the transpose as rows.
  std::vector<float> order(64 * 128, 0.0f);
  for (int c = 0; c < 128; ++c) {
    const int p = c % 62;
    order[static_cast<std::size_t>(p * 128 + c)] = 0x1p30f;
    order[static_cast<std::size_t>((p + 1) * 128 + c)] = 0x1p30f;
    order[static_cast<std::size_t>((p + 2) * 128 + c)] = 1.0f;
  }
  for_each_target([&] {
    for (const std::uint64_t m : {std::uint64_t{0}, mask}) {
      check_rht(order, 64, 128, ScaleAxis::kColumnwise, m);
      check_rht(transposed(order, 64, 128), 128, 64, ScaleAxis::kRowwise, m);
    }
    std::vector<float> dy_t(dy.size()), w_t(w.size());
    check_rht(dy, tokens, out_features, ScaleAxis::kRowwise, mask);
    check_rht(w, out_features, in_features, ScaleAxis::kColumnwise, mask);
    check_rht(z, 128, 37, ScaleAxis::kColumnwise, mask);
    // Along the rows: z's transpose as a 37 x 128 tensor.
    check_rht(transposed(z, 128, 37), 37, 128, ScaleAxis::kRowwise, mask);
    mx_rht_bf16(dy, tokens, out_features, ScaleAxis::kRowwise, mask, dy_t);
    mx_rht_bf16(w, out_features, in_features, ScaleAxis::kColumnwise, mask, w_t);
    // S S^T = I: the transformed pair's product is dY W up to the bf16 roundings.
    CHECK(product_error(dy, w, dy_t, w_t, tokens, out_features, in_features) <
          0.02);  // bf16 rounding: ~2^-8 each
    // A different draw breaks it: the product is then not dY W.
    std::vector<float> w_other(w.size());
    mx_rht_bf16(w, out_features, in_features, ScaleAxis::kColumnwise, mx_rht_sign_mask(3, 9, 1),
                w_other);
    CHECK(product_error(dy, w, dy_t, w_other, tokens, out_features, in_features) > 0.5);
  });
  std::vector<float> dy_t(dy.size());
  CHECK_THROWS_WITH(mx_rht_bf16(dy, 32, 32, ScaleAxis::kRowwise, mask, dy_t),
                    Catch::Contains("cols = 32 is not a multiple of the transform's size 64"));
}

TEST_CASE("sign draws are reproducible and fresh per call", "[mx_dither]") {
  CHECK(mx_rht_sign_mask(0, 7, 3) == mx_rht_sign_mask(0, 7, 3));
  CHECK(mx_rht_sign_mask(0, 7, 3) != mx_rht_sign_mask(0, 7, 4));
  CHECK(mx_rht_sign_mask(0, 7, 3) != mx_rht_sign_mask(1, 7, 3));
  CHECK(mx_rht_sign_mask(0, 7, 3) != mx_rht_sign_mask(0, 8, 3));
  const std::uint64_t m = mx_rht_sign_mask(5, 1, 0);
  CHECK(m == (static_cast<std::uint64_t>(philox_random_word(5, 1, 0)) |
              static_cast<std::uint64_t>(philox_random_word(5, 1, 1)) << 32));
  CHECK(std::popcount(m) > 16);
  CHECK(std::popcount(m) < 48);
}

TEST_CASE("the executor runs an mx plan with rht and stochastic_rounding as the two steps",
          "[mx_dither]") {
  const std::int64_t rows = 128, cols = 64;
  const auto x = gaussian_tensor(rows * cols, 5, false);
  QuantizePlan plan;
  plan.kind = QuantizeKind::kMx;
  plan.format = Format::E2M1;
  plan.block = {32, 1};
  plan.axis = ScaleAxis::kColumnwise;
  plan.mx_mode = E8M0Mode::kFloor;
  plan.rht = true;
  plan.stochastic_rounding = true;
  const StochasticStream stream{2, 4};
  const std::uint64_t signs = mx_rht_sign_mask(2, 1, 0);
  const QuantizeResult got = quantize(plan, x, rows, cols, 3, &stream, signs);
  std::vector<float> transformed(x.size());
  mx_rht_bf16(x, rows, cols, ScaleAxis::kColumnwise, signs, transformed);
  const QuantizeResult want =
      quantize_mx_dither_scale(transformed, rows, cols, ScaleAxis::kColumnwise, stream);
  CHECK(got.tensor.data == want.tensor.data);
  CHECK(got.tensor.scale_e8m0 == want.tensor.scale_e8m0);
  CHECK(got.tensor.rht);
  CHECK(got.tensor.rht_signs == signs);
  CHECK(got.tensor.global_scale == want.tensor.global_scale);
  // Without a stream the plan is refused; with the RHT only, the plan's MX rule runs.
  CHECK_THROWS_WITH(quantize(plan, x, rows, cols, 1, nullptr, signs),
                    Catch::Contains("Philox stream"));
  plan.stochastic_rounding = false;
  const QuantizeResult rn = quantize(plan, x, rows, cols, 1, nullptr, signs);
  const QuantizeResult rn_want =
      quantize_mx(transformed, rows, cols, ScaleAxis::kColumnwise, Format::E2M1, E8M0Mode::kFloor);
  CHECK(rn.tensor.data == rn_want.tensor.data);
  CHECK(rn.tensor.scale_e8m0 == rn_want.tensor.scale_e8m0);
}

}  // namespace
}  // namespace fp8lab::sim::scaling
