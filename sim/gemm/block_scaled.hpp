// Block-scaled GEMM with the arithmetic of Blackwell's block-scaled tensor-core MMA (the
// `blackwell_block` accumulation of sim/settings.hpp), as MMA-Sim 2.1.1 models it
// (shared/spec/reference/fp4-formats.md §5; mmasim/arithmetic/fdpa.py, st_fdpa and gst_fdpa):
//
//   D[M, N] = C + sum over k of A(m, k) * B(n, k) * scale_A(m, k / block) * scale_B(n, k / block)
//
// Operands are stored codes, one code a byte (E2M1 unpacked first: sim/pack.hpp), row-major with K
// contiguous (A [M, K], B [N, K]: the TN layout every block-scaled MMA takes), and their raw scale
// bytes [outer, K / block], as a quantizer stores them (no swizzle).
//
// The hardware walks K one instruction at a time and chains the steps through the fp32 accumulator
// c (c starts as C, or +0): out = c after the last step. One step, by data path:
//
//   kMxf8f6f4  (tcgen05.mma / mma.sync kind::mxf8f6f4; A and B each E4M3, E5M2, E3M2, E2M3 or
//     E2M1; UE8M0 scales per 32): 32 elements. Each element is s * 2^e with e its exponent, a
//     subnormal taking its format's minimum normal exponent (s < 1); each scale 2^(byte - 127).
//     Every product keeps s_a * s_b unnormalized with exponent E = e_a + e_b + e_sa + e_sb; a zero
//     product, and c when it is zero, take E = -133; c takes its fp32 exponent (subnormal -126).
//     E_max = the largest E of the 33 terms, zeros included; each term is truncated toward zero to
//     the grid 2^(E_max - 25); the terms add exactly; the sum is rounded toward zero to fp32
//     (a magnitude of 2^128 or more is Inf); -0 is +0.
//   kMxf4Nvf4  (kind::mxf4nvf4 and kind::mxf4; E2M1 x E2M1; UE8M0 per 32 or 16, or UE4M3 per 16):
//     64 elements in four groups of 16. A group's dot product p is exact; its term is p times the
//     product of the two scales' significands, with exponent E = e_sa + e_sb, or -139 when all 16
//     products are zero or a scale is zero (a group that cancels to 0 keeps E); c as above with
//     -139 for zero. The five terms are aligned to E_max on the grid 2^(E_max - 35), truncated,
//     added exactly and rounded toward zero to fp32 as above. A UE4M3 scale's sign bit is ignored
//     (0xFF is NaN, as 0x7F).
//   Either path: if a term is NaN or infinite (an E4M3 NaN, E5M2 Inf/NaN element, a NaN scale
//     (UE8M0 0xFF, UE4M3 0x7F), a non-finite c), the step's result is the IEEE sum of the terms'
//     values: NaN, or an Inf. Every NaN output is 0x7FFFFFFF.
//
// K must be a multiple of `block`; a last step shorter than 32 / 64 is padded with zero elements,
// as a kernel zero-fills K up to the instruction's K (the padding's zero products count in E_max
// like any zero product).
//
// Threads: rows of D are shared among threads; each output is computed by one thread in the order
// above, so the bits do not depend on the thread count.
//
// Two implementations give the same bits: block_scaled_gemm_into runs Highway lanes across N
// (block_scaled_lanes.cpp) and leaves the outputs with a NaN or infinite term to
// reference::block_scaled_gemm_into, the scalar integer model, which the tests check it against.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/format.hpp"

namespace fp8lab::sim {

// How a block scale is stored: UE8M0 (MX: 2^(byte - 127), 0xFF NaN) or UE4M3 (NVFP4: E4M3 with
// the sign bit ignored, 0x7F NaN).
enum class BlockScaleType : std::uint8_t { kUe8m0, kUe4m3 };

// Which block-scaled data path (see above). kAuto: kMxf4Nvf4 when both operands are E2M1, else
// kMxf8f6f4 (what CUTLASS picks for packed FP4 x FP4).
enum class BlockScaledPath : std::uint8_t { kAuto, kMxf8f6f4, kMxf4Nvf4 };
const char* to_string(BlockScaledPath path);

// Elements per MMA step along K, and the fraction bits the sum keeps (MMA-Sim `F`).
inline constexpr std::int64_t kMxf8f6f4StepK = 32;
inline constexpr std::int64_t kMxf4Nvf4StepK = 64;
inline constexpr std::int64_t kMxf4Nvf4GroupK = 16;
inline constexpr int kMxf8f6f4FractionBits = 25;
inline constexpr int kMxf4Nvf4FractionBits = 35;
// The exponent a zero term takes (MMA-Sim `e_zero`).
inline constexpr int kMxf8f6f4ZeroExponent = -133;
inline constexpr int kMxf4Nvf4ZeroExponent = -139;

struct BlockScaledOperand {
  std::span<const std::uint8_t> codes;   // [outer, k], one code a byte
  std::span<const std::uint8_t> scales;  // [outer, k / block], raw bytes
  std::int64_t outer = 0;                // M (A) or N (B)
  std::int64_t k = 0;
  Format format = Format::E2M1;  // E4M3, E5M2, E3M2, E2M3 or E2M1
  std::int64_t block = 32;       // elements per scale along K: 16 or 32
  BlockScaleType scale_type = BlockScaleType::kUe8m0;
};

struct BlockScaledGemmOptions {
  BlockScaledPath path = BlockScaledPath::kAuto;
  std::span<const float> c;  // empty (+0), or M * N fp32 values the first step starts from
  int threads = 1;           // >= 1
};

// The path kAuto resolves to for these operands; throws std::invalid_argument naming the field
// (format, block, scale_type, sizes) and what the path accepts when the operands do not fit it.
BlockScaledPath resolve_block_scaled_path(const BlockScaledOperand& a, const BlockScaledOperand& b,
                                          BlockScaledPath requested);

// D row-major [M, N] into out (M * N values). Throws std::invalid_argument naming the field on bad
// operands or options.
void block_scaled_gemm_into(const BlockScaledOperand& a, const BlockScaledOperand& b,
                            const BlockScaledGemmOptions& options, std::span<float> out);
std::vector<float> block_scaled_gemm(const BlockScaledOperand& a, const BlockScaledOperand& b,
                                     const BlockScaledGemmOptions& options);

namespace reference {
// The scalar model, one output at a time (same contract and bits as block_scaled_gemm_into).
void block_scaled_gemm_into(const BlockScaledOperand& a, const BlockScaledOperand& b,
                            const BlockScaledGemmOptions& options, std::span<float> out);
}  // namespace reference

// The Highway target block_scaled_gemm_into dispatches to (tests name it in failures).
const char* block_scaled_target_name();

}  // namespace fp8lab::sim
