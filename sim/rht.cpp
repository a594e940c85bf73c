// random_hadamard_transform_bf16(): the model of rht.hpp, with sim/gemm/truncated_sum.hpp's
// fixed-point steps (those of the block-scaled MMA model).
#include "sim/rht.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/cast.hpp"
#include "sim/element_count.hpp"
#include "sim/gemm/truncated_sum.hpp"
#include "sim/rht_lanes.hpp"

namespace fp8lab::sim {

namespace {

constexpr int kFractionBits = 25;  // MMA-Sim's F for bf16 on Hopper and Blackwell
constexpr int kZeroExponent = -133;

float bf16_round(float x) { return bf16_to_fp32(fp32_to_bf16(x)); }

// Sign of M[i][j] = sign_i * (-1)^popcount(i & j).
bool negative(std::uint16_t sign_mask, int i, int j) {
  return (((sign_mask >> i) & 1) ^ (std::popcount(static_cast<unsigned>(i & j)) & 1)) != 0;
}

}  // namespace

void random_hadamard_chunk_bf16(const float* x, std::uint16_t sign_mask, float* y) {
  float in[kRhtSize];
  bool special = false;
  for (int i = 0; i < kRhtSize; ++i) {
    in[i] = bf16_round(x[i]);
    special = special || !std::isfinite(in[i]);
  }
  for (int j = 0; j < kRhtSize; ++j) {
    if (special) {
      double sum = 0.0;
      for (int i = 0; i < kRhtSize; ++i) sum += (negative(sign_mask, i, j) ? -0.25 : 0.25) * in[i];
      y[j] = bf16_round(static_cast<float>(sum));
      continue;
    }
    gemm_detail::Fp32Term terms[kRhtSize];
    int e_max = kZeroExponent;  // c = +0 is a zero term
    for (int i = 0; i < kRhtSize; ++i) {
      if (in[i] == 0.0f) {
        terms[i] = {0, kZeroExponent};
        continue;
      }
      terms[i] = gemm_detail::fp32_term(in[i]);
      if (negative(sign_mask, i, j)) terms[i].m = -terms[i].m;
      terms[i].e -= 2;  // times 0.25
      e_max = std::max(e_max, terms[i].e);
    }
    // A term is m 2^(e - 23); on the grid 2^(E_max - 25) a shift by e - E_max + 2.
    std::int64_t sum = 0;
    for (const auto& t : terms) {
      if (t.m != 0) sum += gemm_detail::shift_toward_zero(t.m, t.e - e_max + 2);
    }
    y[j] = bf16_round(gemm_detail::round_toward_zero_fp32(sum, e_max - kFractionBits));
  }
}

namespace {

void check_arguments(std::span<const float> x, std::int64_t rows, std::int64_t cols, RhtAxis axis,
                     std::span<float> out) {
  const char* fn = "random_hadamard_transform_bf16";
  const std::int64_t n = checked_element_count(fn, rows, cols);
  if (static_cast<std::int64_t>(x.size()) != n || static_cast<std::int64_t>(out.size()) != n) {
    throw std::invalid_argument(std::string(fn) + ": x has " + std::to_string(x.size()) +
                                " and out " + std::to_string(out.size()) +
                                " values, expected rows * cols = " + std::to_string(n));
  }
  const std::int64_t chunked = axis == RhtAxis::kRows ? rows : cols;
  if (chunked % kRhtSize != 0) {
    throw std::invalid_argument(
        std::string(fn) + ": " + (axis == RhtAxis::kRows ? "rows" : "cols") + " = " +
        std::to_string(chunked) + " must be a multiple of 16 (the chunks run along it)");
  }
}

}  // namespace

void rht_detail::rht_chunks_scalar(const float* x, std::int64_t rows, std::int64_t cols,
                                   RhtAxis axis, std::uint16_t sign_mask, std::int64_t c0,
                                   std::int64_t o_begin, std::int64_t o_end, float* out) {
  (void)rows;
  float in[kRhtSize], res[kRhtSize];
  for (std::int64_t o = o_begin; o < o_end; ++o) {
    // Element i of the chunk: (c0 + i, o) for kRows, (o, c0 + i) for kCols.
    const auto at = [&](int i) {
      return static_cast<std::size_t>(axis == RhtAxis::kRows ? (c0 + i) * cols + o
                                                             : o * cols + c0 + i);
    };
    for (int i = 0; i < kRhtSize; ++i) in[i] = x[at(i)];
    random_hadamard_chunk_bf16(in, sign_mask, res);
    for (int i = 0; i < kRhtSize; ++i) out[at(i)] = res[i];
  }
}

void random_hadamard_transform_bf16(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                    RhtAxis axis, std::uint16_t sign_mask, std::span<float> out) {
  check_arguments(x, rows, cols, axis, out);
  rht_detail::rht_lanes(x.data(), rows, cols, axis, sign_mask, out.data());
}

void reference::random_hadamard_transform_bf16(std::span<const float> x, std::int64_t rows,
                                               std::int64_t cols, RhtAxis axis,
                                               std::uint16_t sign_mask, std::span<float> out) {
  check_arguments(x, rows, cols, axis, out);
  const std::int64_t outer = axis == RhtAxis::kRows ? cols : rows;
  const std::int64_t chunked = axis == RhtAxis::kRows ? rows : cols;
  for (std::int64_t c0 = 0; c0 < chunked; c0 += kRhtSize) {
    rht_detail::rht_chunks_scalar(x.data(), rows, cols, axis, sign_mask, c0, 0, outer, out.data());
  }
}

}  // namespace fp8lab::sim
