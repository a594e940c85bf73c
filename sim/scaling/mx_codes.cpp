// mx_scale_codes (sim/scaling/mx_codes.hpp): the MX scale rules of sim/scaling/mx.cpp on 32-bit
// integer lanes, Highway-dispatched like sim/quantize.cpp. With a = the block's amax (NaN when a
// torchao mode sees the block's NaN), E(u) = (u >> 23) & 0xFF and M(u) = u & 0x7F'FFFF:
//   kTe (te_float_to_e8m0 of v = RN(a * RCP)), u = |v| bits:
//     NaN -> 0xFF, Inf -> 0xFE, else E + (M > T && E != 0xFE) with T = 0x40'0000 when E == 0
//     (0x00 is 2^-127, the subnormal with only mantissa bit 22 set; at or below it no round up)
//     and T = 0 otherwise. 0 gives E = 0, M = 0: code 0, as the scalar rule's own 0 case.
//   kRceil, torchao main (rceil_float_to_e8m0 of v = RN(a * RCP)): NaN or Inf -> 0xFF, else
//     E + (M > T), the same T, no saturation (254 + 1 = 255).
//   kFloor / kCeil / kEven (torchao_exponent_mode), u = bits of a, or for kEven
//     (u + 2^(23 - mbits - 1)) & 0xFF80'0000 (round the significand at the element's precision):
//     NaN a -> 0xFF; torchao main also E(u) == 255 -> 0xFF; else
//     clamp(E(u) - 127 + (kCeil && M(u) != 0) - emax, -127, 128) + 127.
//   kRceil, torchao-0.18: clamp(ceil(log2_f32(d)), -127, 127) + 127 with d = RN(a / fp8_max),
//     NaN -> 0xFF, Inf -> 0xFE, log2_f32 = log2 in double rounded to fp32 (torch_log2_f32).
//     For a normal d = 2^k * (1 + f), f = M * 2^-23, k = E - 127 in [-126, 127]: M == 0 gives
//     log2 = k exactly; else log2(1 + f) >= f, so for M >= 128 (f >= 2^-16) the fp32 log2 lies at
//     least 2^-16 above k, more than twice the fp32 spacing just above k for |k| < 128 (at most
//     2^(6 - 23)), and its ceil is k + 1 whatever double's last bit was. d = 0 gives 0 (log2 -Inf,
//     clamped). The few blocks left (0 < M < 128, where fp32 rounding may land on k itself, and
//     subnormal d) take mx_scale_code, the fp32 log2 of the scalar rule.
// The last amax.size() % Lanes blocks also take mx_scale_code.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/scaling/mx_codes.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/lane_types-inl.h"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/mx_codes.hpp"

#ifndef FP8LAB_SIM_SCALING_MX_CODES_CONSTANTS
#define FP8LAB_SIM_SCALING_MX_CODES_CONSTANTS
#include <cstddef>
#include <cstdint>

namespace fp8lab::sim::scaling::mx_simd {

// What the kernel needs about (element format, mode, version), derived once per call.
struct CodeConstants {
  E8M0Mode mode;
  bool torchao_main;
  Format element;
  float reciprocal_of_max;     // mx_reciprocal_of_max (sim/scaling/mx.hpp)
  float max;                   // fp8_max: torchao-0.18 rceil's divisor
  std::int32_t emax;           // the element format's largest exponent (8 for E4M3, 15 for E5M2)
  std::int32_t even_half_ulp;  // 2^(23 - mbits - 1): half an element ulp in fp32 mantissa bits
};

}  // namespace fp8lab::sim::scaling::mx_simd
#endif

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::scaling::mx_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using namespace fp8lab::sim::HWY_NAMESPACE::lane_types;

// Codes for the whole vectors of amax[0, n); returns how many blocks it did.
std::size_t MxScaleCodes(const float* HWY_RESTRICT amax, const std::uint8_t* HWY_RESTRICT has_nan,
                         std::size_t n, const CodeConstants& constants,
                         std::uint8_t* HWY_RESTRICT codes) {
  const CodeConstants c = constants;
  const DF df;
  const DI di;
  const std::size_t lanes = hn::Lanes(df);
  const VI zero = hn::Zero(di);
  const VI one = hn::Set(di, 1);
  const VI abs_mask = hn::Set(di, 0x7FFF'FFFF);
  const VI inf_bits = hn::Set(di, 0x7F80'0000);
  const VI quiet_nan = hn::Set(di, 0x7FC0'0000);
  const VI mantissa_mask = hn::Set(di, 0x007F'FFFF);
  const VI half_mantissa = hn::Set(di, 0x0040'0000);  // with E == 0: 2^-127
  const VI exponent_mask = hn::Set(di, 0xFF);
  const VI code_nan = hn::Set(di, 0xFF);
  const VI code_fe = hn::Set(di, 0xFE);
  const VI rcp = hn::BitCast(di, hn::Set(df, c.reciprocal_of_max));
  const VI bias_plus_emax = hn::Set(di, 127 + c.emax);
  const VI lowest = hn::Set(di, -127);
  const VI highest = hn::Set(di, 128);
  const VI highest_rceil = hn::Set(di, 127);
  const VI rceil_sure = hn::Set(di, 128);  // M >= 128: ceil(log2_f32(d)) = k + 1 (above)
  const VI max = hn::BitCast(di, hn::Set(df, c.max));
  const VI bias = hn::Set(di, 127);
  const VI even_half_ulp = hn::Set(di, c.even_half_ulp);
  const VI even_mask = hn::Set(di, static_cast<std::int32_t>(0xFF80'0000u));
  const bool nan_propagates = c.mode != E8M0Mode::kTe;

  std::size_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    VI a = hn::BitCast(di, hn::LoadU(df, amax + j));
    if (nan_propagates) {
      const VI block_nan = hn::BitCast(di, hn::PromoteTo(DU32(), hn::LoadU(DU8(), has_nan + j)));
      a = hn::IfThenElse(block_nan != zero, quiet_nan, a);
    }
    VI code;
    const bool rceil = c.mode == E8M0Mode::kRceil;
    if (c.mode == E8M0Mode::kTe || (rceil && c.torchao_main)) {
      // v = RN(a * RCP), one IEEE multiply as the scalar rule's `amax * reciprocal_of_max`.
      const VI v =
          hn::And(hn::BitCast(di, hn::Mul(hn::BitCast(df, a), hn::BitCast(df, rcp))), abs_mask);
      const VI e = hn::ShiftRight<23>(v);
      const VI m = hn::And(v, mantissa_mask);
      const VI threshold = hn::IfThenElseZero(e == zero, half_mantissa);
      auto up = m > threshold;
      if (c.mode == E8M0Mode::kTe) {
        up = hn::And(up, hn::Not(e == code_fe));
        code = hn::Add(e, hn::IfThenElseZero(up, one));
        code = hn::IfThenElse(v == inf_bits, code_fe, code);
        code = hn::IfThenElse(v > inf_bits, code_nan, code);
      } else {  // torchao main's rceil
        code = hn::Add(e, hn::IfThenElseZero(up, one));
        code = hn::IfThenElse(v < inf_bits, code, code_nan);
      }
    } else if (rceil) {  // torchao-0.18's rceil
      const VI d = hn::BitCast(di, hn::Div(hn::BitCast(df, a), hn::BitCast(df, max)));
      const VI e = hn::ShiftRight<23>(d);  // d >= +0 or NaN: no sign bit
      const VI m = hn::And(d, mantissa_mask);
      const VI log2_ceil = hn::Sub(hn::Add(e, hn::IfThenZeroElse(m == zero, one)), bias);
      code = hn::Add(hn::Min(hn::Max(log2_ceil, lowest), highest_rceil), bias);
      code = hn::IfThenElse(d == inf_bits, code_fe, code);
      code = hn::IfThenElse(d > inf_bits, code_nan, code);
      const auto ambiguous =
          hn::Or(hn::And(m > zero, m < rceil_sure), hn::And(e == zero, m > zero));
      if (!hn::AllFalse(di, ambiguous)) {
        HWY_ALIGN std::int32_t lane_ambiguous[hn::MaxLanes(DI())];
        HWY_ALIGN std::int32_t lane_code[hn::MaxLanes(DI())];
        HWY_ALIGN float lane_amax[hn::MaxLanes(DF())];  // with the block's NaN folded in
        hn::Store(hn::VecFromMask(di, ambiguous), di, lane_ambiguous);
        hn::Store(code, di, lane_code);
        hn::Store(hn::BitCast(df, a), df, lane_amax);
        for (std::size_t l = 0; l < lanes; ++l) {
          if (lane_ambiguous[l] == 0) continue;
          lane_code[l] =
              mx_scale_code(lane_amax[l], c.element, E8M0Mode::kRceil, TorchaoVersion::kV0_18);
        }
        code = hn::Load(di, lane_code);
      }
    } else {
      VI u = a;
      if (c.mode == E8M0Mode::kEven) u = hn::And(hn::Add(u, even_half_ulp), even_mask);
      const VI field = hn::And(hn::ShiftRight<23>(u), exponent_mask);
      VI e = field;
      if (c.mode == E8M0Mode::kCeil) {
        e = hn::Add(e, hn::IfThenZeroElse(hn::And(u, mantissa_mask) == zero, one));
      }
      // clamp(E - 127 - emax, -127, 128) + 127
      code = hn::Add(hn::Min(hn::Max(hn::Sub(e, bias_plus_emax), lowest), highest), bias);
      if (c.torchao_main) code = hn::IfThenElse(field == exponent_mask, code_nan, code);
      code = hn::IfThenElse(hn::And(a, abs_mask) > inf_bits, code_nan, code);
    }
    hn::StoreU(hn::U8FromU32(hn::BitCast(DU32(), code)), DU8(), codes + j);
  }
  return j;
}

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::scaling::mx_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <limits>
#include <stdexcept>
#include <string>

namespace fp8lab::sim::scaling {
namespace mx_simd {
HWY_EXPORT(MxScaleCodes);
}  // namespace mx_simd

void mx_scale_codes(std::span<const float> amax, std::span<const std::uint8_t> has_nan,
                    Format element, E8M0Mode mode, TorchaoVersion torchao,
                    std::span<std::uint8_t> codes) {
  const std::size_t n = amax.size();
  if (has_nan.size() != n || codes.size() != n) {
    throw std::invalid_argument("mx_scale_codes: " + std::to_string(n) + " amaxes, " +
                                std::to_string(has_nan.size()) + " has_nan flags, " +
                                std::to_string(codes.size()) + " codes; all three must be equal");
  }
  const FormatSpec& es = spec(element);
  if (!is_fp8(element) && !is_subbyte(element)) {
    throw std::invalid_argument(std::string("mx_scale_codes: element = ") + es.name +
                                "; accepted: e4m3, e5m2, e2m1, e2m3, e3m2");
  }
  const mx_simd::CodeConstants c{mode,
                                 torchao == TorchaoVersion::kMain,
                                 element,
                                 mx_reciprocal_of_max(element),
                                 fp8_max(element),
                                 es.max_exponent(),
                                 std::int32_t{1} << (23 - es.mantissa_bits - 1)};
  const std::size_t done =
      HWY_DYNAMIC_DISPATCH(mx_simd::MxScaleCodes)(amax.data(), has_nan.data(), n, c, codes.data());
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t j = done; j < n; ++j) {
    const float a = (has_nan[j] != 0 && mode != E8M0Mode::kTe) ? kNaN : amax[j];
    codes[j] = mx_scale_code(a, element, mode, torchao);
  }
}

}  // namespace fp8lab::sim::scaling
#endif  // HWY_ONCE
