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
  const std::int64_t lines = along_cols ? rows : cols;
  // Element (line, t) of the chunked view: t runs along K.
  const auto at = [&](std::int64_t line, std::int64_t t) {
    return static_cast<std::size_t>(along_cols ? line * cols + t : t * cols + line);
  };
  float in[kMxRhtSize];
  for (std::int64_t line = 0; line < lines; ++line) {
    for (std::int64_t c0 = 0; c0 < k; c0 += kMxRhtSize) {
      for (int i = 0; i < kMxRhtSize; ++i) {
        const float v = bf16_round(x[at(line, c0 + i)]);
        in[i] = ((sign_mask >> i) & 1u) != 0 ? -v : v;
      }
      for (int j = 0; j < kMxRhtSize; ++j) {
        float sum = 0.0f;
        for (int i = 0; i < kMxRhtSize; ++i) {
          const float term = in[i] * 0.125f;  // exact: a bf16 value times 2^-3
          sum += (std::popcount(static_cast<unsigned>(i & j)) & 1) != 0 ? -term : term;
        }
        out[at(line, c0 + j)] = bf16_round(sum);
      }
    }
  }
}

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
  float tensor_amax = 0.0f;
  std::uint64_t underflowed = 0;
  for (std::int64_t br = 0; br < t.scale_rows(); ++br) {
    for (std::int64_t bc = 0; bc < t.scale_cols(); ++bc) {
      const std::int64_t r0 = br * t.block_rows, r1 = std::min(rows, r0 + t.block_rows);
      const std::int64_t c0 = bc * t.block_cols, c1 = std::min(cols, c0 + t.block_cols);
      float amax = 0.0f;
      bool special = false;
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
          const float v = x[static_cast<std::size_t>(r * cols + c)];
          if (!std::isfinite(v)) special = true;
          if (!std::isnan(v)) tensor_amax = std::max(tensor_amax, std::fabs(v));
          amax = std::max(amax, std::fabs(v));
        }
      }
      const auto b = static_cast<std::size_t>(br * t.scale_cols() + bc);
      if (special) {
        t.scale_e8m0[b] = 0xFF;
        t.scale_inv[b] = std::numeric_limits<float>::quiet_NaN();
        t.scale[b] = std::numeric_limits<float>::quiet_NaN();
        continue;  // codes stay 0
      }
      const int se = amax == 0.0f ? -127 : std::max(floor_log2(amax) - 2, -127);
      t.scale_e8m0[b] = static_cast<std::uint8_t>(se + 127);
      t.scale_inv[b] = std::ldexp(kFourThirds, se);
      t.scale[b] = std::ldexp(0.75f, -se);
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
          const auto i = static_cast<std::size_t>(r * cols + c);
          const std::uint8_t code =
              mx_dither_scale_code(x[i], se, mx_dither_uniform(stream.seed, stream.stream, i));
          t.data[i] = code;
          if (x[i] != 0.0f && (code & 0x7u) == 0) ++underflowed;
        }
      }
    }
  }
  t.global_scale = {tensor_amax, 0.75f, kFourThirds};
  result.stats.amax = tensor_amax;
  result.stats.count = x.size();
  result.stats.underflowed = underflowed;
  return result;
}

}  // namespace fp8lab::sim::scaling
