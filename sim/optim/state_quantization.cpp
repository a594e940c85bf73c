#include "sim/optim/state_quantization.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/cast.hpp"
#include "sim/optim/exact_power.hpp"

namespace fp8lab::sim::optim {
namespace {

constexpr float kCoatMinValue = 1e-30f;  // QUANT_MIN_VAL in COAT's kernels

std::uint32_t encode_element(float x, StateFormat format) {
  switch (format) {
    case StateFormat::kFp32: return std::bit_cast<std::uint32_t>(x);
    case StateFormat::kBf16: return fp32_to_bf16(x);
    case StateFormat::kFp16: return fp32_to_fp16(x);
    case StateFormat::kE4M3: return cast_fp32_to_fp8(x, Format::E4M3, Overflow::kSatFinite);
    case StateFormat::kE5M2: return cast_fp32_to_fp8(x, Format::E5M2, Overflow::kSatFinite);
  }
  return 0;
}

float decode_element(std::uint32_t code, StateFormat format) {
  switch (format) {
    case StateFormat::kFp32: return std::bit_cast<float>(code);
    case StateFormat::kBf16: return bf16_to_fp32(static_cast<std::uint16_t>(code));
    case StateFormat::kFp16: return fp16_to_fp32(static_cast<std::uint16_t>(code));
    case StateFormat::kE4M3: return decode_fp8(static_cast<std::uint8_t>(code), Format::E4M3);
    case StateFormat::kE5M2: return decode_fp8(static_cast<std::uint8_t>(code), Format::E5M2);
  }
  return 0.0f;
}

std::size_t block_count(std::size_t n, const StateQuantization& q) {
  const auto b = static_cast<std::size_t>(q.block);
  return (n + b - 1) / b;
}

void check(const StateQuantization& q, std::size_t codes, std::size_t n) {
  if (codes != n) {
    throw std::invalid_argument("optimizer state of " + std::to_string(codes) +
                                " elements used with " + std::to_string(n));
  }
  if (is_scaled(q.format) && q.scaling == StateScaling::kPerBlock && q.block <= 0) {
    throw std::invalid_argument("optimizer state: per_block needs a block size > 0");
  }
  if (q.expansion == Expansion::kCoat &&
      (q.format != StateFormat::kE4M3 || q.scaling != StateScaling::kPerBlock)) {
    throw std::invalid_argument("optimizer state: COAT's expansion is defined for per_block e4m3");
  }
}

// FP8-LM's per-tensor multiplier (MS-AMP ScalingMeta.compute_scaling_factor, margin 0): 2^e with
// e = floor(log2(fmax / amax)) of the fp32 quotient; previous when amax is 0 or not finite. A
// quotient that overflows fp32 (amax below fmax / FLT_MAX) takes e = 127, where torch's would be
// an infinite scale.
float per_tensor_scale(float amax, float fmax, float previous) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return previous;
  const float quotient = fmax / amax;
  const int e = std::isfinite(quotient) ? std::ilogb(quotient) : 127;
  return std::ldexp(1.0f, e);
}

}  // namespace

float state_format_max(StateFormat format) {
  switch (format) {
    case StateFormat::kFp16: return 65504.0f;
    case StateFormat::kE4M3: return 448.0f;
    case StateFormat::kE5M2: return 57344.0f;
    default: return 0.0f;
  }
}

StoredState initial_state(std::size_t n, const StateQuantization& q) {
  StoredState s;
  s.codes.assign(n, 0u);
  if (!is_scaled(q.format)) return s;
  if (q.scaling == StateScaling::kPerTensor) {
    s.scales.assign(1, 1.0f);
    return s;
  }
  check(q, n, n);
  const auto blocks = block_count(n, q);
  s.scales.assign(blocks, 0.0f);
  if (q.expansion == Expansion::kCoat) {
    s.exponents.assign(blocks, 1.0f);
    s.centers.assign(blocks, 1.0f);
  }
  return s;
}

void decode_state(const StoredState& state, const StateQuantization& q, std::span<float> out) {
  check(q, state.codes.size(), out.size());
  const std::size_t n = out.size();
  if (!is_scaled(q.format)) {
    for (std::size_t i = 0; i < n; ++i) out[i] = decode_element(state.codes[i], q.format);
    return;
  }
  if (q.scaling == StateScaling::kPerTensor) {
    const float inverse = 1.0f / state.scales.at(0);  // a power of two: exact
    for (std::size_t i = 0; i < n; ++i) out[i] = decode_element(state.codes[i], q.format) * inverse;
    return;
  }
  const auto b = static_cast<std::size_t>(q.block);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = i / b;
    const float v = decode_element(state.codes[i], q.format) * state.scales.at(g);
    if (q.expansion == Expansion::kNone) {
      out[i] = v;
    } else {
      // sign_exp_avg * powf(fabsf(v), 1 / expand) * sqrtminmax, as the kernel writes it. A NaN v
      // (a code of NaN, or 0 x inf where k = inf) is positive: the kernel runs on a GPU, whose
      // only fp32 NaN is 0x7fffffff, where x86's 0 x inf is 0xffc00000. The second moment's
      // line has no sign (powf(v, 1 / expand)); its v is never negative, so it is the same.
      const float sign = std::signbit(v) && !std::isnan(v) ? -1.0f : 1.0f;
      out[i] = sign * exact_power(std::fabs(v), 1.0f / state.exponents.at(g)) * state.centers.at(g);
    }
  }
}

void encode_state(std::span<const float> x, const StateQuantization& q, StoredState& state) {
  check(q, state.codes.size(), x.size());
  const std::size_t n = x.size();
  if (!is_scaled(q.format)) {
    for (std::size_t i = 0; i < n; ++i) state.codes[i] = encode_element(x[i], q.format);
    return;
  }
  const float fmax = state_format_max(q.format);
  if (q.scaling == StateScaling::kPerTensor) {
    float amax = 0.0f;
    for (const float v : x) amax = std::isnan(v) ? v : std::max(amax, std::fabs(v));
    const float scale = per_tensor_scale(amax, fmax, state.scales.at(0));
    state.scales[0] = scale;
    for (std::size_t i = 0; i < n; ++i) state.codes[i] = encode_element(x[i] * scale, q.format);
    return;
  }
  const auto b = static_cast<std::size_t>(q.block);
  for (std::size_t g = 0, first = 0; first < n; ++g, first += b) {
    const std::size_t last = std::min(n, first + b);
    float amax = 0.0f, amin = std::numeric_limits<float>::infinity();
    for (std::size_t i = first; i < last; ++i) {
      const float a = std::fabs(x[i]);
      amax = std::max(amax, a);
      if (a > 0.0f) amin = std::min(amin, a);
    }
    if (q.expansion == Expansion::kNone) {
      const float scale = (amax + kCoatMinValue) / fmax;
      state.scales[g] = scale;
      for (std::size_t i = first; i < last; ++i) {
        state.codes[i] = encode_element(x[i] / scale, q.format);
      }
      continue;
    }
    if (std::isinf(amin)) amin = 0.0f;  // an all-zero group
    const float max_value = amax + kCoatMinValue, min_value = amin + kCoatMinValue;
    const float ratio = max_value / min_value;
    const float center = std::sqrt(max_value) * std::sqrt(min_value);
    const float upper = fmax * fmax / 2.0f;  // ratioUpperBound
    const float log_upper = static_cast<float>(exact_log2(upper));
    const float log_ratio = static_cast<float>(exact_log2(ratio));
    const auto steps = static_cast<float>(q.expand_min);
    // log2(1) = 0: k = +inf, as the kernel's division by zero gives.
    const float k = std::floor((log_upper / log_ratio) * steps) / steps;
    const float scale = exact_power(max_value / center, k) / fmax;
    state.scales[g] = scale;
    state.exponents[g] = k;
    state.centers[g] = center;
    for (std::size_t i = first; i < last; ++i) {
      const float sign = std::signbit(x[i]) ? -1.0f : 1.0f;
      const float y = sign * exact_power(std::fabs(x[i]) / center, k);
      state.codes[i] = encode_element(y / scale, q.format);
    }
  }
}

}  // namespace fp8lab::sim::optim
