// gemm_into's `blackwell_block` model on QuantizedTensor operands (gemm.hpp): the stored codes and
// raw scale bytes laid out K-contiguous for sim::block_scaled_gemm (block_scaled.hpp), then the
// NVFP4 per-tensor scales as the GEMM's alpha, then gemm.hpp's epilogue (bias, bf16 output).
#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/gemm/block_scaled.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/gemm/plan.hpp"

namespace fp8lab::sim::gemm_detail {
namespace {

// An operand's codes and scale bytes as block_scaled_gemm reads them: spans into the stored tensor
// where its layout already is that one, else into `codes` / `scales`, filled here. The buffers are
// left uninitialized before they are filled (each byte is written once, so zeroing them first was
// a memset of every operand for nothing).
struct Laid {
  std::unique_ptr<std::uint8_t[]> codes, scales;
  BlockScaledOperand op;
};

// The operand as block_scaled_gemm reads it: codes [outer, K] and one scale byte per `block`
// elements along K, taken from the stored tensor's scale grid (a 16 x 16 tile's byte repeats for
// each of its 16 outer rows, as TE's 2-D scale tensor holds it).
Laid lay_out(const GemmOperand& g, char which) {
  const QuantizedTensor& t = g.tensor;
  const bool k_cols = g.k_dim == ReduceDim::kCols;
  const bool nvfp4 = !t.scale_e4m3.empty();
  const std::vector<std::uint8_t>& bytes = nvfp4 ? t.scale_e4m3 : t.scale_e8m0;
  const std::int64_t block = k_cols ? t.block_cols : t.block_rows;
  const std::string name = std::string("gemm (blackwell_block): operand ") + which;
  if (bytes.empty() || (block != 16 && block != 32)) {
    throw std::invalid_argument(
        name + ": needs MX (E8M0 scales) or NVFP4 (E4M3 scales) blocks of 16 or 32 along K, got " +
        (bytes.empty() ? std::string("no raw scale bytes") : std::to_string(block) + " along K"));
  }
  Laid l;
  const std::int64_t outer = k_cols ? t.rows : t.cols, k = k_cols ? t.cols : t.rows;
  const std::int64_t kb = k / block, scale_cols = t.scale_cols();
  const auto n_codes = static_cast<std::size_t>(outer * k);
  const auto n_scales = static_cast<std::size_t>(outer * kb);
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  const auto codes_buffer = [&l, n_codes] {
    l.codes = std::make_unique_for_overwrite<std::uint8_t[]>(n_codes);
    return l.codes.get();
  };
  const auto scales_buffer = [&l, n_scales] {
    l.scales = std::make_unique_for_overwrite<std::uint8_t[]>(n_scales);
    return l.scales.get();
  };
  if (k % block == 0 && k_cols) {
    // K along the columns: the codes are already [outer, K], and with one scale row per row
    // (blocks of 1 x block) so are the scale bytes; a 2-D block's scale row repeats for each of
    // its block_rows rows.
    l.op.codes = t.data;  // block_scaled_gemm names a size that is not outer * k
    if (t.block_rows == 1 && bytes.size() == n_scales) {
      l.op.scales = std::span<const std::uint8_t>(bytes.data(), n_scales);
    } else {
      std::uint8_t* scales = scales_buffer();
      for (std::int64_t o = 0; o < outer; ++o) {
        const auto from = bytes.begin() +
                          static_cast<std::ptrdiff_t>((o / t.block_rows) * scale_cols);
        std::copy(from, from + kb, scales + o * kb);
      }
      l.op.scales = std::span<const std::uint8_t>(scales, n_scales);
    }
  } else if (k % block == 0) {
    // K along the rows: the codes transposed in tiles (both sides stay in cache), and scale j of
    // column o from the stored grid's row j.
    // The source's pointer and sizes in locals: byte stores may alias anything, so the compiler
    // reloaded them from the tensor at every element.
    std::uint8_t* codes = codes_buffer();
    std::uint8_t* scales = scales_buffer();
    const std::uint8_t* data = t.data.data();
    const std::uint8_t* scale_grid = bytes.data();
    const std::int64_t cols = t.cols, block_cols = t.block_cols;
    constexpr std::int64_t kTile = 64;
    for (std::int64_t k0 = 0; k0 < k; k0 += kTile) {
      for (std::int64_t o0 = 0; o0 < outer; o0 += kTile) {
        const std::int64_t k1 = std::min(k, k0 + kTile), o1 = std::min(outer, o0 + kTile);
        for (std::int64_t o = o0; o < o1; ++o) {
          for (std::int64_t kk = k0; kk < k1; ++kk) codes[o * k + kk] = data[kk * cols + o];
        }
      }
    }
    for (std::int64_t o = 0; o < outer; ++o) {
      const std::uint8_t* column = scale_grid + o / block_cols;
      for (std::int64_t j = 0; j < kb; ++j) scales[o * kb + j] = column[j * scale_cols];
    }
    l.op.codes = std::span<const std::uint8_t>(codes, n_codes);
    l.op.scales = std::span<const std::uint8_t>(scales, n_scales);
  } else {
    // K not a multiple of the block: element by element (block_scaled_gemm then names the bad K).
    std::uint8_t* codes = codes_buffer();
    std::uint8_t* scales = scales_buffer();
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const std::int64_t r = k_cols ? o : kk, c = k_cols ? kk : o;
        codes[at(o * k + kk)] = t.data[at(r * t.cols + c)];
        if (kk % block == 0 && kk / block < kb) {  // the partial block has no scale slot
          scales[at(o * kb + kk / block)] =
              bytes[at((r / t.block_rows) * scale_cols + c / t.block_cols)];
        }
      }
    }
    l.op.codes = std::span<const std::uint8_t>(codes, n_codes);
    l.op.scales = std::span<const std::uint8_t>(scales, n_scales);
  }
  l.op.outer = outer;
  l.op.k = k;
  l.op.format = t.format;
  l.op.block = block;
  l.op.scale_type = nvfp4 ? BlockScaleType::kUe4m3 : BlockScaleType::kUe8m0;
  return l;
}

// The GEMM's alpha: 1 for MX (RN(fp32(4/3)^2) for Tseng et al.'s dither_scale operands, whose
// global_scale[2] is fp32(4/3): sim/scaling/mx_dither.hpp); for NVFP4 RN(S_dec_A * S_dec_B), the two per-tensor decode scales
// (global_scale[2]; torchao's per_tensor_scale product). TE forms its alpha from the amaxes,
// amax_A * amax_B * fp32(1 / (6 * 6 * 448 * 448)) (fp4-formats.md §3a.6), the same value up to the
// roundings of S_enc = 2688 / amax and S_dec = 1 / S_enc: a few ulps, so not TE's last bits.
float alpha_of(const QuantizedTensor& a, const QuantizedTensor& b) {
  if (a.global_scale.empty() != b.global_scale.empty()) {
    throw std::invalid_argument(
        "gemm (blackwell_block): one operand is NVFP4 (a per-tensor scale), the other is not");
  }
  if (a.global_scale.empty()) return 1.0f;
  return a.global_scale[2] * b.global_scale[2];
}

}  // namespace

void block_scaled_quantized_gemm(const GemmOperand& a, const GemmOperand& b,
                                 const GemmOptions& options, std::span<float> out) {
  const Laid la = lay_out(a, 'A'), lb = lay_out(b, 'B');
  BlockScaledGemmOptions o;
  o.threads = options.threads;
  block_scaled_gemm_into(la.op, lb.op, o, out);
  const float alpha = alpha_of(a.tensor, b.tensor);
  if (alpha != 1.0f) {
    for (float& v : out) v = std::isnan(v * alpha) ? std::bit_cast<float>(0x7FFF'FFFFu) : v * alpha;
  }
  finish_output(out, lb.op.outer, options.bias, options.output, options.threads);
}

}  // namespace fp8lab::sim::gemm_detail
