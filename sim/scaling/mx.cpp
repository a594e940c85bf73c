#include "sim/scaling/mx.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>

#include "sim/cast.hpp"
#include "sim/scaling/blocked.hpp"
#include "sim/scaling/mx_codes.hpp"

namespace fp8lab::sim::scaling {
namespace {

constexpr std::uint32_t kF32MantissaMask = 0x007F'FFFFu;
constexpr std::uint32_t kF32HalfMantissa = 0x0040'0000u;  // with E == 0: 2^-127 exactly

std::uint32_t exponent_field(std::uint32_t bits) { return (bits >> 23) & 0xFFu; }

// OCP/torchao floor, ceil, even (torchao-mx.md §4.2 table, §4.3). Both versions compute the byte
// from amax's bit pattern alike; they differ in which amax gives 255 (NaN):
//   main:  `isfinite(max_abs) ? b : 255` (the rounded amax for even): NaN and Inf;
//   v0.18: `torch.where(torch.isnan(max_abs), 255, b)` only: an Inf amax keeps its exponent field
//          255 (e = 128), clamped to e - emax <= 128, so Inf gives 247 (E4M3), 240 (E5M2).
std::uint8_t torchao_exponent_mode(float amax, Format element, E8M0Mode mode,
                                   TorchaoVersion torchao) {
  const FormatSpec& es = spec(element);
  std::uint32_t u = std::bit_cast<std::uint32_t>(amax);
  if (mode == E8M0Mode::kEven) {
    // Round the significand at the element's precision: adding half an element ulp carries into
    // the exponent exactly when the significand is >= 2 - 2^-(mbits+1) (an Inf stays Inf).
    const std::uint32_t half_ulp = 1u << (23 - es.mantissa_bits - 1);
    u = (u + half_ulp) & 0xFF80'0000u;
  }
  if (std::isnan(amax)) return 0xFF;
  if (torchao == TorchaoVersion::kMain && !std::isfinite(std::bit_cast<float>(u))) return 0xFF;
  int e = static_cast<int>(exponent_field(u)) - 127;
  if (mode == E8M0Mode::kCeil && (u & kF32MantissaMask) != 0) e += 1;
  const int s = std::clamp(e - es.max_exponent(), -127, 128);
  return static_cast<std::uint8_t>(s + 127);
}

// torchao v0.18.0 _to_mx_rceil, eager fallback (torchao-mx.md §4.3):
//   descale = max_abs / max_pos          fp32 division (torch on CPU; PyTorch's CUDA kernel
//                                        divides by a Python scalar as x * RN(1/max_pos),
//                                        BinaryDivTrueKernel.cu, which is main's product)
//   e = isnan ? 255 : isinf ? 254 : uint8(clamp(ceil(log2(descale)), -127, 127) + 127)
// log2 of 0 is -Inf, clamped to -127: e = 0.
std::uint8_t torchao_0_18_rceil(float amax, Format element) {
  const float descale = amax / fp8_max(element);
  if (std::isnan(descale)) return 0xFF;
  if (std::isinf(descale)) return 0xFE;
  const float e = std::clamp(std::ceil(torch_log2_f32(descale)), -127.0f, 127.0f);
  return static_cast<std::uint8_t>(e + 127.0f);
}

QuantizeResult quantize_mx_blocks(const char* function, std::span<const float> x, std::int64_t rows,
                                  std::int64_t cols, BlockShape block, Format format, E8M0Mode mode,
                                  TorchaoVersion torchao) {
  // A block's scale is its code's: multiplier and scale_inv by table, one entry per E8M0 code.
  struct CodeTables {
    std::array<float, 256> multiplier;
    std::array<float, 256> scale_inv;
  };
  auto tables = std::make_shared<CodeTables>();
  for (int e = 0; e < 256; ++e) {
    const auto code = static_cast<std::uint8_t>(e);
    tables->multiplier[code] = mx_block_multiplier(code, mode, torchao);
    tables->scale_inv[code] = decode_e8m0(code);
  }
  return quantize_blocked(
      function, x, rows, cols, block, format, true,
      [format, mode, torchao, tables](std::span<const float> amax,
                                      std::span<const std::uint8_t> has_nan, BlockScaleRow out) {
        mx_scale_codes(amax, has_nan, format, mode, torchao, out.e8m0);
        for (std::size_t j = 0; j < out.e8m0.size(); ++j) {
          out.scale[j] = tables->multiplier[out.e8m0[j]];
          out.scale_inv[j] = tables->scale_inv[out.e8m0[j]];
        }
      },
      mx_subbyte_specials(mode, torchao));
}

}  // namespace

float mx_reciprocal_of_max(Format element) {
  return static_cast<float>(1.0 / spec(element).max_finite());
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

std::uint8_t mx_scale_code(float amax, Format element, E8M0Mode mode, TorchaoVersion torchao) {
  switch (mode) {
    case E8M0Mode::kTe: return te_float_to_e8m0(amax * mx_reciprocal_of_max(element));
    case E8M0Mode::kRceil:
      return torchao == TorchaoVersion::kV0_18
                 ? torchao_0_18_rceil(amax, element)
                 : rceil_float_to_e8m0(amax * mx_reciprocal_of_max(element));
    case E8M0Mode::kFloor:
    case E8M0Mode::kCeil:
    case E8M0Mode::kEven: return torchao_exponent_mode(amax, element, mode, torchao);
  }
  return 0xFF;
}

float mx_element_multiplier(std::uint8_t e) {
  if (e == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return decode_e8m0(static_cast<std::uint8_t>(254 - e));
}

float mx_block_multiplier(std::uint8_t e, E8M0Mode mode, TorchaoVersion torchao) {
  if (mode == E8M0Mode::kTe || torchao == TorchaoVersion::kMain) return mx_element_multiplier(e);
  if (mode == E8M0Mode::kRceil) {
    // v0.18 rcp_fp32: where(e == 255, descale (NaN), where(e == 254, 2^-127, where(e == 0, 1.0,
    // exp2(127 - e)))): only e = 0 differs from 2^(127 - e) (TE's exp2f_rcp special case).
    return e == 0 ? 1.0f : mx_element_multiplier(e);
  }
  // v0.18 floor/ceil/even: data_hp / clamp(bitcast<float>(e << 23), min=2^-126). e = 255 is +Inf
  // (x / Inf: multiplier 0, see the header), e = 0 is +0 clamped to 2^-126 (multiplier 2^126),
  // every other e is 2^(e - 127) exactly.
  if (e == 0xFF) return 0.0f;
  return mx_element_multiplier(std::max<std::uint8_t>(e, 1));
}

QuantizeResult quantize_mx(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                           ScaleAxis axis, Format format, E8M0Mode mode, TorchaoVersion torchao) {
  return quantize_mx_blocks("quantize_mx", x, rows, cols, mx_block_shape(axis), format, mode,
                            torchao);
}

QuantizeResult quantize_mx_2d(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                              Format format, E8M0Mode mode, TorchaoVersion torchao) {
  return quantize_mx_blocks("quantize_mx_2d", x, rows, cols, BlockShape{kMxBlockSize, kMxBlockSize},
                            format, mode, torchao);
}

MxCopies quantize_mx_copies(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                            Format format, E8M0Mode mode, TorchaoVersion torchao) {
  return {quantize_mx(x, rows, cols, ScaleAxis::kRowwise, format, mode, torchao),
          quantize_mx(x, rows, cols, ScaleAxis::kColumnwise, format, mode, torchao)};
}

QuantizeResult quantize_mx_operand(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                   Gemm gemm, Operand operand, Format format, E8M0Mode mode,
                                   TorchaoVersion torchao, bool weight_2d) {
  const ScaleAxis axis = scale_axis(gemm, operand);  // throws for an operand the GEMM lacks
  if (weight_2d && operand == Operand::kWeight) {
    return quantize_mx_2d(x, rows, cols, format, mode, torchao);
  }
  return quantize_mx(x, rows, cols, axis, format, mode, torchao);
}

}  // namespace fp8lab::sim::scaling
