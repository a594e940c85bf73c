#include "sim/scaling/mx_dither.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/cast.hpp"
#include "sim/element_count.hpp"
#include "sim/rng.hpp"
#include "sim/scaling/mx_dither_lanes.hpp"

namespace fp8lab::sim::scaling {
namespace {

constexpr int kBlock = 32;  // kMxBlockSize
constexpr float kFourThirds = 4.0f / 3.0f;

float bf16_round(float x) { return bf16_to_fp32(fp32_to_bf16(x)); }

// floor(log2 |v|) of a finite nonzero fp32 value (subnormals included).
int floor_log2(float v) {
  int e = 0;
  std::frexp(v, &e);  // v = m 2^e, 0.5 <= |m| < 1
  return e - 1;
}

// 2^k as fp32 for k in [-149, 127].
float pow2(int k) { return std::ldexp(1.0f, k); }

}  // namespace

std::uint64_t mx_rht_sign_mask(std::uint64_t seed, std::uint64_t stream, std::uint64_t call) {
  const std::uint64_t lo = philox_random_word(seed, stream, 2 * call);
  const std::uint64_t hi = philox_random_word(seed, stream, 2 * call + 1);
  return lo | (hi << 32);
}

void mx_rht_bf16(std::span<const float> x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                 std::uint64_t sign_mask, std::span<float> out) {
  checked_element_count("sim::scaling::mx_rht_bf16", rows, cols, x.size(), "x.size()");
  if (out.size() != x.size()) {
    throw std::invalid_argument(
        "sim::scaling::mx_rht_bf16: out.size() = " + std::to_string(out.size()) +
        ", not rows * cols = " + std::to_string(x.size()));
  }
  const bool along_cols = axis == ScaleAxis::kRowwise;
  const std::int64_t k = along_cols ? cols : rows;
  if (k % kMxRhtSize != 0) {
    throw std::invalid_argument(std::string("sim::scaling::mx_rht_bf16: ") +
                                (along_cols ? "cols" : "rows") + " = " + std::to_string(k) +
                                " is not a multiple of the transform's size 64");
  }
  if (x.empty()) return;
  mx_dither_detail::mx_rht_lanes(x.data(), rows, cols, axis, sign_mask, out.data());
}

namespace mx_dither_detail {

void mx_rht_chunk_scalar(const float* x, std::int64_t cols, ScaleAxis axis, std::uint64_t sign_mask,
                         std::int64_t line, std::int64_t t0, float* out) {
  const bool along_cols = axis == ScaleAxis::kRowwise;
  // Element t of the line (t along K).
  const auto at = [&](std::int64_t t) { return along_cols ? line * cols + t : t * cols + line; };
  float in[kMxRhtSize];
  for (int i = 0; i < kMxRhtSize; ++i) {
    const float v = bf16_round(x[at(t0 + i)]);
    in[i] = ((sign_mask >> i) & 1u) != 0 ? -v : v;
  }
  for (int j = 0; j < kMxRhtSize; ++j) {
    float sum = 0.0f;
    for (int i = 0; i < kMxRhtSize; ++i) {
      const float term = in[i] * 0.125f;  // exact: a bf16 value times 2^-3
      sum += (std::popcount(static_cast<unsigned>(i & j)) & 1) != 0 ? -term : term;
    }
    out[at(t0 + j)] = bf16_round(sum);
  }
}

}  // namespace mx_dither_detail

float mx_dither_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint32_t word = philox_random_word(seed, stream, index);
  return static_cast<float>(word & 0xFF'FFFFu) * 0x1p-24f;
}

std::uint8_t mx_dither_scale_code(float x, int shared_exponent, float u) {
  const float a = (3.0f * x) / pow2(shared_exponent + 2);
  if (std::isnan(a)) return 0;
  const bool negative = a < 0.0f;
  const float magnitude = std::fabs(a);
  float q = 6.0f;  // |a| = Inf: 3 * x overflowed (not modelled: see the header)
  if (std::isfinite(magnitude)) {
    const int pe = magnitude == 0.0f ? 0 : std::max(floor_log2(magnitude), 0);
    const float scaled = magnitude / pow2(pe) * 2.0f;
    const float f = std::floor(scaled + u);
    q = std::min(f / 2.0f * pow2(pe), 6.0f);
  }
  return cast_fp32_to_subbyte(negative ? -q : q, Format::E2M1, kSubbyteCuda);
}

namespace mx_dither_detail {

int mx_dither_shared_exponent(float amax) {
  return amax == 0.0f ? -127 : std::max(floor_log2(amax) - 2, -127);
}

void mx_dither_set_scales(int shared_exponent, std::size_t b, DitherOutput& out) {
  out.scale_e8m0[b] = static_cast<std::uint8_t>(shared_exponent + 127);
  out.scale_inv[b] = std::ldexp(kFourThirds, shared_exponent);
  out.scale[b] = std::ldexp(0.75f, -shared_exponent);
}

void mx_dither_set_special(std::size_t b, DitherOutput& out) {
  out.scale_e8m0[b] = 0xFF;
  out.scale_inv[b] = std::numeric_limits<float>::quiet_NaN();
  out.scale[b] = std::numeric_limits<float>::quiet_NaN();
}

void mx_dither_block_scalar(const float* x, std::int64_t cols, std::int64_t r0, std::int64_t r1,
                            std::int64_t c0, std::int64_t c1, std::size_t b, std::uint64_t seed,
                            std::uint64_t stream, DitherOutput& out) {
  float amax = 0.0f;
  bool special = false;
  for (std::int64_t r = r0; r < r1; ++r) {
    for (std::int64_t c = c0; c < c1; ++c) {
      const float v = x[r * cols + c];
      if (!std::isfinite(v)) special = true;
      if (!std::isnan(v)) out.amax = std::max(out.amax, std::fabs(v));
      amax = std::max(amax, std::fabs(v));
    }
  }
  if (special) {
    mx_dither_set_special(b, out);
    return;  // codes stay 0
  }
  const int se = mx_dither_shared_exponent(amax);
  mx_dither_set_scales(se, b, out);
  for (std::int64_t r = r0; r < r1; ++r) {
    for (std::int64_t c = c0; c < c1; ++c) {
      const auto i = static_cast<std::uint64_t>(r * cols + c);
      const std::uint8_t code = mx_dither_scale_code(x[i], se, mx_dither_uniform(seed, stream, i));
      out.codes[i] = code;
      if (x[i] != 0.0f && (code & 0x7u) == 0) ++out.underflowed;
    }
  }
}

}  // namespace mx_dither_detail

QuantizeResult quantize_mx_dither_scale(std::span<const float> x, std::int64_t rows,
                                        std::int64_t cols, ScaleAxis axis,
                                        const StochasticStream& stream) {
  check_tensor_arguments("sim::scaling::quantize_mx_dither_scale", x.size(), rows, cols,
                         Format::E2M1, true);
  const bool along_cols = axis == ScaleAxis::kRowwise;
  QuantizeResult result;
  QuantizedTensor& t = result.tensor;
  t.rows = rows;
  t.cols = cols;
  t.format = Format::E2M1;
  t.block_rows = along_cols ? 1 : kBlock;
  t.block_cols = along_cols ? kBlock : 1;
  t.data.assign(x.size(), 0);
  const auto blocks = static_cast<std::size_t>(t.scale_rows() * t.scale_cols());
  t.scale_inv.resize(blocks);
  t.scale_e8m0.resize(blocks);
  t.scale.resize(blocks);
  mx_dither_detail::DitherOutput out{t.data.data(), t.scale_e8m0.data(), t.scale_inv.data(),
                                     t.scale.data(), t.scale_cols()};
  if (!x.empty()) {
    mx_dither_detail::mx_dither_lanes(x.data(), rows, cols, axis, stream.seed, stream.stream, out);
  }
  t.global_scale = {out.amax, 0.75f, kFourThirds};
  result.stats.amax = out.amax;
  result.stats.count = x.size();
  result.stats.underflowed = out.underflowed;
  return result;
}

}  // namespace fp8lab::sim::scaling
