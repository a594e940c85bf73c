#include "sim/scaling/mx.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "sim/cast.hpp"
#include "sim/scaling/blocked.hpp"

namespace fp8lab::sim::scaling {
namespace {

constexpr std::uint32_t kF32MantissaMask = 0x007F'FFFFu;
constexpr std::uint32_t kF32HalfMantissa = 0x0040'0000u;  // with E == 0: 2^-127 exactly

std::uint32_t exponent_field(std::uint32_t bits) { return (bits >> 23) & 0xFFu; }

// (float)(1.0 / fp8_max): E4M3 0x3B124925, E5M2 0x37924925 (te-accelerate.md §4.3; TE
// Quantized_Limits::max_reciprocal, torchao's fp32 constant).
float reciprocal_of_max(Format element) {
  return static_cast<float>(1.0 / spec(element).max_finite());
}

// OCP/torchao floor, ceil, even (torchao-mx.md §4.2 table).
std::uint8_t torchao_exponent_mode(float amax, Format element, E8M0Mode mode) {
  const FormatSpec& es = spec(element);
  std::uint32_t u = std::bit_cast<std::uint32_t>(amax);
  if (mode == E8M0Mode::kEven) {
    // Round the significand at the element's precision: adding half an element ulp carries into
    // the exponent exactly when the significand is >= 2 - 2^-(mbits+1).
    const std::uint32_t half_ulp = 1u << (23 - es.mantissa_bits - 1);
    u = (u + half_ulp) & 0xFF80'0000u;
  }
  if (!std::isfinite(amax) || !std::isfinite(std::bit_cast<float>(u))) return 0xFF;
  int e = static_cast<int>(exponent_field(u)) - 127;
  if (mode == E8M0Mode::kCeil && (u & kF32MantissaMask) != 0) e += 1;
  const int s = std::clamp(e - es.max_exponent(), -127, 128);
  return static_cast<std::uint8_t>(s + 127);
}

QuantizeResult quantize_mx_blocks(const char* function, std::span<const float> x,
                                  std::int64_t rows, std::int64_t cols, BlockShape block,
                                  Format format, E8M0Mode mode) {
  return quantize_blocked(function, x, rows, cols, block, format, true,
                          [format, mode](float amax, bool has_nan) {
                            const float a = (has_nan && mode != E8M0Mode::kTe)
                                                ? std::numeric_limits<float>::quiet_NaN()
                                                : amax;
                            const std::uint8_t e = mx_scale_code(a, format, mode);
                            return BlockScale{mx_element_multiplier(e), decode_e8m0(e), e};
                          });
}

}  // namespace

const char* to_string(E8M0Mode mode) {
  switch (mode) {
    case E8M0Mode::kTe: return "te";
    case E8M0Mode::kFloor: return "floor";
    case E8M0Mode::kCeil: return "ceil";
    case E8M0Mode::kEven: return "even";
    case E8M0Mode::kRceil: return "rceil";
  }
  return "?";
}

std::uint8_t te_float_to_e8m0(float v) {
  if (std::isnan(v)) return 0xFF;
  if (std::isinf(v)) return 0xFE;
  if (v == 0.0f) return 0x00;
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  auto e = static_cast<std::uint8_t>(u >> 23);
  const std::uint32_t m = u & kF32MantissaMask;
  if (m > 0 && e != 0xFE && !(e == 0 && m <= kF32HalfMantissa)) ++e;
  return e;
}

std::uint8_t rceil_float_to_e8m0(float v) {
  if (!std::isfinite(v)) return 0xFF;
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t e = exponent_field(u);
  const std::uint32_t m = u & kF32MantissaMask;
  const std::uint32_t up = e == 0 ? static_cast<std::uint32_t>(m > kF32HalfMantissa)
                                  : static_cast<std::uint32_t>(m != 0);
  return static_cast<std::uint8_t>(e + up);  // 254 + 1 = 255: no saturation
}

std::uint8_t mx_scale_code(float amax, Format element, E8M0Mode mode) {
  switch (mode) {
    case E8M0Mode::kTe: return te_float_to_e8m0(amax * reciprocal_of_max(element));
    case E8M0Mode::kRceil: return rceil_float_to_e8m0(amax * reciprocal_of_max(element));
    case E8M0Mode::kFloor:
    case E8M0Mode::kCeil:
    case E8M0Mode::kEven: return torchao_exponent_mode(amax, element, mode);
  }
  return 0xFF;
}

float mx_element_multiplier(std::uint8_t e) {
  if (e == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return decode_e8m0(static_cast<std::uint8_t>(254 - e));
}

QuantizeResult quantize_mx(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                           ScaleAxis axis, Format format, E8M0Mode mode) {
  const BlockShape block = axis == ScaleAxis::kRowwise ? BlockShape{1, kMxBlockSize}
                                                       : BlockShape{kMxBlockSize, 1};
  return quantize_mx_blocks("quantize_mx", x, rows, cols, block, format, mode);
}

QuantizeResult quantize_mx_2d(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                              Format format, E8M0Mode mode) {
  return quantize_mx_blocks("quantize_mx_2d", x, rows, cols, BlockShape{kMxBlockSize, kMxBlockSize},
                            format, mode);
}

MxCopies quantize_mx_copies(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                            Format format, E8M0Mode mode) {
  return {quantize_mx(x, rows, cols, ScaleAxis::kRowwise, format, mode),
          quantize_mx(x, rows, cols, ScaleAxis::kColumnwise, format, mode)};
}

QuantizeResult quantize_mx_operand(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                   Gemm gemm, Operand operand, Format format, E8M0Mode mode,
                                   bool weight_2d) {
  const ScaleAxis axis = scale_axis(gemm, operand);  // throws for an operand the GEMM lacks
  if (weight_2d && operand == Operand::kWeight) return quantize_mx_2d(x, rows, cols, format, mode);
  return quantize_mx(x, rows, cols, axis, format, mode);
}

}  // namespace fp8lab::sim::scaling
