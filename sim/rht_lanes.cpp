// The 16-point RHT of rht.hpp in Highway lanes, one chunk a lane, with the bits of the scalar
// model (random_hadamard_chunk_bf16), which takes the chunks these lanes leave.
//
// Why integers suffice: every term x_i M[i][j] = +-x_i / 4 has the same magnitude for all 16
// outputs j, and all outputs of a chunk share E_max (the largest exponent of the x_i, less 2). So
// each term is truncated onto the grid 2^(E_max - 25) once per input, not per output:
//   u_i = trunc(x_i * 2^(23 - E_max))      (x_i bf16: 8 significant bits; |u_i| < 2^26),
// an exact fp32 product whose int32 conversion truncates toward zero, as the model does; then
//   z_j = sum_i sign_i (-1)^popcount(i & j) u_i
// is a fast Walsh-Hadamard transform (4 butterfly stages of int32 adds, exact: |z_j| < 2^30) after
// the signs. y_j = RZ_fp32(z_j) * 2^(E_max - 25): z_j converted to fp32 and stepped back toward
// zero where the conversion rounded away (24 bits kept), then a power-of-two scaling, exact while
// the result is a normal fp32 or >= 2^128 (Inf, as the model's conversion). Then bf16 RN.
// Left to the scalar model: chunks with a NaN or Inf (after the bf16 rounding of the input), and
// chunks whose largest input is below 2^-99, where a result could be an fp32 subnormal.
#include "sim/rht_lanes.hpp"

#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sim/rht_lanes.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "sim/lane_types-inl.h"
#include "sim/trunc_to_int-inl.h"

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::rht_detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using fp8lab::sim::HWY_NAMESPACE::TruncToInt;

using namespace fp8lab::sim::HWY_NAMESPACE::lane_types;

// bf16 round to nearest even of finite fp32 bits (sim/cast.cpp's fp32_to_bf16, then back).
HWY_INLINE VI Bf16Bits(VI bits) {
  const DI di;
  const VI odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(di, 1));
  const VI rounded = hn::Add(bits, hn::Add(hn::Set(di, 0x7FFF), odd));
  return hn::And(rounded, hn::Set(di, static_cast<std::int32_t>(0xFFFF0000u)));
}

// 2^e for e in [-126, 127].
HWY_INLINE VF Pow2(VI e) {
  return hn::BitCast(DF(), hn::ShiftLeft<23>(hn::Add(e, hn::Set(DI(), 127))));
}

// Lanes chunks: element i of lane l at in[i * stride + l], likewise out; sign_bits[i] is 0 or
// the fp32 sign bit, input i's sign (RhtSignBits). Returns the lanes whose chunk is the scalar
// model's (header), bit l for lane l; their outputs are written, but wrong.
// Every loop below is unrolled in full (GCC unroll pragmas) and the signs are applied without a
// branch, so that the 16 vectors of a chunk stay in registers: without them GCC kept u[] on the
// stack, every butterfly two loads and two stores, and branched on each sign bit (issue 46 item 2
// on an Ice Lake Xeon, docs/performance.md).
HWY_INLINE std::uint64_t ChunkLanes(const float* in, std::size_t in_stride,
                                    const std::int32_t* sign_bits, float* out,
                                    std::size_t out_stride) {
  const DF df;
  const DI di;
  const VI abs_mask = hn::Set(di, 0x7FFFFFFF);
  VI bits[kRhtSize];
  VI top = hn::Zero(di), top_in = hn::Zero(di);
#pragma GCC unroll 16
  for (int i = 0; i < kRhtSize; ++i) {
    const VI raw = hn::BitCast(di, hn::LoadU(df, in + i * in_stride));
    bits[i] = Bf16Bits(raw);
    top_in = hn::Max(top_in, hn::And(raw, abs_mask));
    top = hn::Max(top, hn::And(bits[i], abs_mask));
  }
  // NaN or Inf in (the rounding is for finite values) or after the bf16 rounding, or a largest
  // magnitude below 2^-99 (but not zero).
  const VI inf = hn::Set(di, 0x7F7FFFFF);
  const auto special = hn::Or(hn::Gt(top_in, inf), hn::Gt(top, inf));
  const auto tiny = hn::And(hn::Lt(top, hn::Set(di, (127 - 99) << 23)), hn::Gt(top, hn::Zero(di)));
  const auto left = hn::Or(special, tiny);
  // E_max + 2 = the largest input's exponent, >= -99 here (a zero chunk takes -99: its terms are
  // 0 whatever the grid).
  const VI e_top =
      hn::Sub(hn::Max(hn::ShiftRight<23>(top), hn::Set(di, 127 - 99)), hn::Set(di, 127));
  // 2^(23 - E_max) = 2^(25 - e_top) <= 2^124 (e_top >= -99).
  const VF grid = Pow2(hn::Sub(hn::Set(di, 25), e_top));
  VI u[kRhtSize];
#pragma GCC unroll 16
  for (int i = 0; i < kRhtSize; ++i) {
    // sign_i u_i = trunc(sign_i x_i * grid): the product is exact and truncation is odd, so the
    // sign goes on x's sign bit, one XOR.
    const VF x = hn::BitCast(df, hn::Xor(bits[i], hn::Set(di, sign_bits[i])));
    u[i] = TruncToInt(hn::Mul(x, grid));  // |x * grid| < 2^26
  }
#pragma GCC unroll 4
  for (int h = 1; h < kRhtSize; h *= 2) {
#pragma GCC unroll 16
    for (int i = 0; i < kRhtSize; i += 2 * h) {
#pragma GCC unroll 8
      for (int j = i; j < i + h; ++j) {
        const VI a = u[j], b = u[j + h];
        u[j] = hn::Add(a, b);
        u[j + h] = hn::Sub(a, b);
      }
    }
  }
  // y_j = RZ_fp32(z_j) * 2^(E_max - 25) = RZ_fp32(z_j) * 2^(e_top - 27) (>= 2^-126 for z != 0).
  const VF scale = Pow2(hn::Sub(e_top, hn::Set(di, 27)));
#pragma GCC unroll 16
  for (int j = 0; j < kRhtSize; ++j) {
    const VF f = hn::ConvertTo(df, u[j]);
    const VI back = TruncToInt(f);  // f <= 2^30
    const auto away = hn::Gt(hn::Abs(back), hn::Abs(u[j]));
    const VI f_bits = hn::BitCast(di, f);
    const VF rz = hn::BitCast(df, hn::IfThenElse(away, hn::Sub(f_bits, hn::Set(di, 1)), f_bits));
    const VI y = hn::BitCast(di, hn::Mul(rz, scale));
    hn::StoreU(hn::BitCast(df, Bf16Bits(y)), df, out + j * out_stride);
  }
  if (hn::AllFalse(di, left)) return 0;
  std::uint8_t bits_out[8] = {};
  hn::StoreMaskBits(di, left, bits_out);
  std::uint64_t mask = 0;
  for (int b = 0; b < 8; ++b) mask |= std::uint64_t{bits_out[b]} << (8 * b);
  return mask;
}

std::int64_t RhtLanes(const float* x, std::int64_t rows, std::int64_t cols, RhtAxis axis,
                      std::uint16_t sign_mask, float* out) {
  std::int64_t left = 0;
  const DF df;
  const auto lanes = static_cast<std::int64_t>(hn::Lanes(df));
  const std::int64_t outer = axis == RhtAxis::kRows ? cols : rows;
  const std::int64_t chunked = axis == RhtAxis::kRows ? rows : cols;
  HWY_ALIGN float in[kRhtSize * hn::MaxLanes(df)];
  HWY_ALIGN float res[kRhtSize * hn::MaxLanes(df)];
  std::int32_t sign_bits[kRhtSize];
  for (int i = 0; i < kRhtSize; ++i) {
    sign_bits[i] = ((sign_mask >> i) & 1) != 0 ? static_cast<std::int32_t>(0x80000000u) : 0;
  }
  for (std::int64_t c0 = 0; c0 < chunked; c0 += kRhtSize) {
    std::int64_t o = 0;
    for (; o + lanes <= outer; o += lanes) {
      std::uint64_t left_lanes;
      if (axis == RhtAxis::kRows) {
        // Lanes are columns: element i of the chunks is row c0 + i, contiguous.
        left_lanes = ChunkLanes(x + c0 * cols + o, static_cast<std::size_t>(cols), sign_bits,
                                out + c0 * cols + o, static_cast<std::size_t>(cols));
      } else {
        // Lanes are rows: element i of each row's chunk gathered into in[i][lane], and back.
        for (std::int64_t l = 0; l < lanes; ++l) {
          for (int i = 0; i < kRhtSize; ++i) in[i * lanes + l] = x[(o + l) * cols + c0 + i];
        }
        left_lanes = ChunkLanes(in, static_cast<std::size_t>(lanes), sign_bits, res,
                                static_cast<std::size_t>(lanes));
        for (std::int64_t l = 0; l < lanes; ++l) {
          for (int i = 0; i < kRhtSize; ++i) out[(o + l) * cols + c0 + i] = res[i * lanes + l];
        }
      }
      for (std::int64_t l = 0; l < lanes && left_lanes != 0; ++l) {
        if ((left_lanes >> l) & 1) {
          rht_chunks_scalar(x, rows, cols, axis, sign_mask, c0, o + l, o + l + 1, out);
          ++left;
        }
      }
    }
    rht_chunks_scalar(x, rows, cols, axis, sign_mask, c0, o, outer, out);
    left += outer - o;
  }
  return left;
}

const char* RhtTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace fp8lab::sim::rht_detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace fp8lab::sim {
namespace rht_detail {
HWY_EXPORT(RhtLanes);
HWY_EXPORT(RhtTargetName);

std::int64_t rht_lanes(const float* x, std::int64_t rows, std::int64_t cols, RhtAxis axis,
                       std::uint16_t sign_mask, float* out) {
  return HWY_DYNAMIC_DISPATCH(RhtLanes)(x, rows, cols, axis, sign_mask, out);
}
}  // namespace rht_detail

const char* rht_target_name() { return HWY_DYNAMIC_DISPATCH(rht_detail::RhtTargetName)(); }
}  // namespace fp8lab::sim
#endif
