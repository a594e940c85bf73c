// Internal to sim/gemm/: operands decoded once into packed fp32 panels, the K-block partition of
// gemm.hpp, and the per-tile arguments the SIMD kernels (fp32_seq.cpp, hopper.cpp) consume.
//
// Panels: operand rows (A) or columns (B) of C are grouped `width` at a time; a panel holds all K
// values of its width outputs, k-major: value(o, k) sits at [panel][k][o % width]. A micro-kernel
// then reads one contiguous stream per operand and vectorizes across the columns of C, never
// across k, so each output's sum keeps the order of gemm.hpp. Padding rows/columns and padded K
// hold +0.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "sim/cast.hpp"
#include "sim/gemm/gemm.hpp"

namespace fp8lab::sim::gemm_detail {

// Allocates on 64-byte (cache line, AVX-512 vector) boundaries: the kernels' vector loads of the
// packed panels then never straddle two cache lines, which costs AVX-512 loads about half their
// throughput.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
  // resize() default-initializes new elements (floats and bytes: not zeroed), so that a buffer
  // its writer fills completely is not also cleared first (a memset of the packed panels cost 4%
  // of a small GEMM); assign(n, value) and the other constructors are unchanged.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

inline constexpr std::int64_t kTileRows = 6;   // rows of C per A panel
inline constexpr std::int64_t kTileCols = 32;  // columns of C per B panel

struct PackedOperand {
  std::int64_t outer = 0;                // M (A) or N (B), unpadded
  std::int64_t width = 0;                // kTileRows or kTileCols
  std::int64_t panels = 0;               // ceil(outer / width)
  std::int64_t k = 0;                    // K after pad_inner_dim
  AlignedVector<float> values;           // [panel][k][width]
  AlignedVector<float> exponent_powers;  // hopper only: 2^e (raw exponent), 0 for 0 / NaN / Inf
  std::vector<float> block_scales;       // [panel][block][width]: the operand's scale_inv per block
  // The AVX-512 hopper kernel's bytes (hopper_rz.cpp) beside signed values; see HopperRzLayout.
  AlignedVector<std::int8_t> exponent_bytes;  // A: [panel][k][12], B: [panel][k][64]
  AlignedVector<std::uint8_t> low_bit_bytes;  // the same layout

  const float* panel_values(std::int64_t p) const { return values.data() + p * k * width; }
  const float* panel_powers(std::int64_t p) const { return exponent_powers.data() + p * k * width; }
};

// The round-toward-zero hopper layout (hopper_rz.cpp). values as for fp32_seq (signed, [k][width]);
// per k, two byte arrays in the same order:
//  A: for each row pair (2p, 2p+1) the 4 bytes x(2p), x(2p+1), x(2p), x(2p+1) (12 bytes);
//  B: x(n) twice for each column n (64 bytes),
// so that one 64-byte vector holds rows 2p (even bytes) and 2p+1 (odd bytes) of 32 outputs.
//  exponent_bytes: e, the raw exponent of gemm.hpp, or kNoExponent for a zero (it never wins a
//    maximum).
//  low_bit_bytes: l = the exponent of the lowest set bit of |x| (x = s * 2^l with s odd), in
//    [-16, 15] for every nonzero FP8 value, with the sign in bit 7 arranged so that the byte sum
//    of an A and a B code is, modulo 256,
//      l_a + l_b + 64        if a * b < 0   (in [32, 94])
//      l_a + l_b + 192       if a * b > 0   (in [160, 222])
//      >= 95 and <= 254      if a or b is 0
//    A: l + 128 * (a < 0);  B: l + 64 + 128 * (b >= 0);  zero: l = kZeroLowBit, A as negative,
//    B as positive. Then "a * b is negative and not a multiple of 2^T" is one unsigned byte
//    comparison, sum < clamp(T, -33, 31) + 64, for any T (hopper_rz.cpp step 3).
struct HopperRzLayout {
  static constexpr std::int64_t kAExponentBytes = 2 * kTileRows;
  static constexpr std::int64_t kBExponentBytes = 2 * kTileCols;
  static constexpr std::int8_t kNoExponent = -64;  // + any real exponent stays below -40
  // A zero's l: with the other operand's l >= -16 its sums are >= 47 - 16 + 64 = 95 (negative
  // form) or <= 47 + 15 + 192 = 254 (positive form), never counted and never wrapped; zero times
  // zero takes the negative form (A's zero negative, B's positive): 47 + 47 + 64 = 158.
  static constexpr int kZeroLowBit = 47;
};

// Hopper: whether the group of K ending at g1 promotes its accumulator c into P_j: at the end of
// the block, and with the split accumulator also every kHopperPromotionK k of the block.
inline bool hopper_promotes(bool split_accumulator, std::int64_t g1, std::int64_t block_begin,
                            std::int64_t block_end) {
  return (split_accumulator && (g1 - block_begin) % kHopperPromotionK == 0) || g1 == block_end;
}

// The part of K block j that one tile call covers: k in [k0, k1) of the block's [begin, end).
struct BlockPart {
  std::int64_t begin, end;  // the whole block
  std::int64_t k0, k1;      // its part in this call
};

// One call of a tile kernel: an A panel times a B panel over k in [k_begin, k_end), which lies
// inside one block or covers whole blocks (plan.chunks). The tile's state between calls lives in
// partial (P_j of a block not finished yet), carry (hopper's e8m13 accumulator c) and total.
// Every kernel walks the blocks the same way:
//   for (std::int64_t j = t.first_block; t.has_block(j); ++j) { const BlockPart part = t.part(j); }
struct TileArgs {
  const float* a = nullptr;         // panel values [k][kTileRows], k from 0
  const float* b = nullptr;         // [k][kTileCols]
  const float* a_powers = nullptr;  // hopper only, same layout as a
  const float* b_powers = nullptr;
  const std::int8_t* a_exponents = nullptr;  // hopper_rz layout only (HopperRzLayout)
  const std::int8_t* b_exponents = nullptr;
  const std::uint8_t* a_low_bits = nullptr;
  const std::uint8_t* b_low_bits = nullptr;
  const float* a_scales = nullptr;             // [block][kTileRows]
  const float* b_scales = nullptr;             // [block][kTileCols]
  const std::int64_t* block_starts = nullptr;  // blocks + 1 entries
  std::int64_t blocks = 0;
  std::int64_t k_begin = 0, k_end = 0;
  std::int64_t first_block = 0;  // the block that contains k_begin
  float* partial = nullptr;      // [kTileRows][kTileCols]
  float* carry = nullptr;
  float* total = nullptr;

  // Whether block j (from first_block on) has a part in [k_begin, k_end).
  bool has_block(std::int64_t j) const { return j < blocks && block_starts[j] < k_end; }
  BlockPart part(std::int64_t j) const {
    return {block_starts[j], block_starts[j + 1], std::max(k_begin, block_starts[j]),
            std::min(k_end, block_starts[j + 1])};
  }
};

// A range of K processed for every tile before the next one starts, so that the B panel's slice
// (kKChunk * kTileCols floats = 32 KiB) stays in L1 while the A panels of a work unit stream past.
// A multiple of the hopper promotion interval, so hopper groups never straddle two chunks.
inline constexpr std::int64_t kKChunk = 256;
static_assert(kKChunk % kHopperPromotionK == 0);
struct KChunk {
  std::int64_t k_begin = 0, k_end = 0, first_block = 0;
};

struct GemmPlan {
  GemmShape shape;  // shape.k is the padded K
  std::vector<std::int64_t> block_starts;
  std::vector<KChunk> chunks;  // increasing k; whole blocks up to kKChunk, or kKChunk pieces of one
  PackedOperand a, b;

  std::int64_t blocks() const { return static_cast<std::int64_t>(block_starts.size()) - 1; }
  // The operand pointers of one tile (state and K range left to the caller).
  TileArgs tile(std::int64_t a_panel, std::int64_t b_panel) const;
};

// Cuts the blocks into chunks (see kKChunk): consecutive whole blocks while they fit in kKChunk,
// a longer block into kKChunk pieces from its start.
std::vector<KChunk> k_chunks(const std::vector<std::int64_t>& block_starts);

// The K-block starts of gemm.hpp plus the end (padded_k); throws if the operands' scale blocks
// along K do not line up.
std::vector<std::int64_t> k_block_starts(const GemmOperand& a, const GemmOperand& b, std::int64_t k,
                                         std::int64_t padded_k);

// How the quantized operands are packed: plain values (fp32_seq), values plus exponent_powers
// (hopper_tile), or values plus the bytes of HopperRzLayout (hopper_rz_tile).
enum class Packing : std::uint8_t { kValues, kHopperPowers, kHopperRz };

// Validates the operands, resolves the K-blocks and decodes both operands (in parallel over
// panels) in the given packing.
GemmPlan make_quantized_plan(const GemmOperand& a, const GemmOperand& b, bool pad_inner_dim,
                             Packing packing, int threads);
// Whether any code of t decodes to NaN or Inf (hopper_rz_tile does not take them).
bool has_non_finite_code(const QuantizedTensor& t);
// gemm_shape's twin for dense operands: checks A's and B's sizes against their data, then K, then
// that C's M * N fits in int64 (in this order, so a malformed operand is named as itself).
GemmShape dense_gemm_shape(const DenseOperand& a, const DenseOperand& b);
// The high-precision GEMM's plan: one block, unit scales.
GemmPlan make_dense_plan(const DenseOperand& a, const DenseOperand& b, bool round_to_bf16,
                         int threads);

// The SIMD tile kernels (runtime dispatch), in gemm.hpp's order of operations.
void fp32_seq_tile(const TileArgs& args);      // FMA, exact products
void fp32_mul_add_tile(const TileArgs& args);  // RN(acc + RN(a*b))
void hopper_tile(const TileArgs& args, bool split_accumulator);
// The same model on HopperRzLayout with round-toward-zero FMAs (hopper_rz.cpp): only where
// hopper_rz_available() (AVX-512 targets), and only for operands without NaN or Inf codes.
bool hopper_rz_available();
void hopper_rz_tile(const TileArgs& args, bool split_accumulator);
// HopperRzLayout's packing in AVX-512 lanes (hopper_rz.cpp), by 16-bit table lookups: per code,
// the high half of its fp32 value (the low half is 0 for every element format: at most 8
// significant bits) and its exponent and low-bit words (B: the byte twice, as the layout stores
// it; A: the byte in the low half).
struct RzWordTables {
  alignas(64) std::uint16_t value_high[256];
  alignas(64) std::uint16_t exponent[256];
  alignas(64) std::uint16_t low_bit[256];
};
// Fills k consecutive k of a panel in HopperRzLayout from its codes in panel order (the codes of
// k kk at codes + kk * code_stride, the padding as code 0), width kTileRows (A) or kTileCols (B);
// code_stride is the width for A, whose codes hold at least 16 * 6 bytes past every A step of 16 k
// (zeros), and any stride >= 32 for B (a B panel's rows can be read in place from the tensor).
// Only where hopper_rz_available().
void hopper_rz_pack(const std::uint8_t* codes, std::int64_t code_stride, std::int64_t k,
                    std::int64_t width, const RzWordTables& tables, float* values,
                    std::int8_t* exponents, std::uint8_t* low_bits);
// The codes of a panel whose operand stores K contiguously (code (w, kk) at data[w * o_stride +
// kk], rows w < valid) for kk in [k0, k1), in panel order: out[(kk - k0) * width + w]; rows past
// `valid` are left as they are (the caller zeroes them). Only where hopper_rz_available().
void hopper_rz_codes(const std::uint8_t* data, std::int64_t o_stride, std::int64_t valid,
                     std::int64_t k0, std::int64_t k1, std::int64_t width, std::uint8_t* out);

// Throw std::invalid_argument naming the field: threads >= 1, bias empty or N values, out M * N.
void check_threads(int threads);
void check_output(const GemmShape& shape, std::span<const float> bias, std::size_t out_size);

// The output epilogue (output.cpp): out[i] = total[i] (+ bias[i] unless bias is null), NaN ->
// 0x7FFFFFFF, bf16 RN when asked, for count values; out may be total.
void finish_values(const float* total, const float* bias, GemmOutputType output, std::int64_t count,
                   float* out);
// gemm_into's kBlackwellBlock: MX or NVFP4 QuantizedTensors through block_scaled_gemm
// (block_scaled_quantized.cpp), NVFP4's per-tensor scales as alpha, then finish_output.
void block_scaled_quantized_gemm(const GemmOperand& a, const GemmOperand& b,
                                 const GemmOptions& options, std::span<float> out);

// The same over a whole C (total, [M, N], in place), with the bias per column.
void finish_output(std::span<float> total, std::int64_t n, std::span<const float> bias,
                   GemmOutputType output, int threads);

// fp32 -> bf16 -> fp32 with round-to-nearest-even: sim::fp32_to_bf16 (cast.cpp) inlined for the
// packing and output loops, where a call per element costs as much as a small GEMM. Adding
// 0x7FFF plus the lowest kept bit rounds exact ties to even; NaN goes through fp32_to_bf16
// (bf16's canonical quiet NaN). The tests compare against sim::fp32_to_bf16.
inline float rounded_to_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return bf16_to_fp32(fp32_to_bf16(x));
  return std::bit_cast<float>((bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u);
}

}  // namespace fp8lab::sim::gemm_detail
