// Operand validation, K-blocks (gemm.hpp) and decoding into packed panels (plan.hpp).
#include "sim/gemm/plan.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

#include "sim/cast.hpp"
#include "sim/decode_table.hpp"
#include "sim/element_count.hpp"
#include "sim/parallel.hpp"

namespace fp8lab::sim {

namespace {

std::string operand_name(char which) { return std::string("GEMM operand ") + which; }

void check_tensor(const QuantizedTensor& t, char which) {
  const std::string name = operand_name(which);
  if (!is_fp8(t.format) && !is_subbyte(t.format)) {
    throw std::invalid_argument(name + ": format must be e4m3, e5m2, e2m1, e2m3 or e3m2, got " +
                                spec(t.format).name);
  }
  t.check_shape(name.c_str());
}

std::int64_t k_of(const GemmOperand& op) {
  return op.k_dim == ReduceDim::kCols ? op.tensor.cols : op.tensor.rows;
}
std::int64_t outer_of(const GemmOperand& op) {
  return op.k_dim == ReduceDim::kCols ? op.tensor.rows : op.tensor.cols;
}
// Length of the runs of K over which the operand's scale is constant.
std::int64_t k_run_of(const GemmOperand& op) {
  return op.k_dim == ReduceDim::kCols ? op.tensor.block_cols : op.tensor.block_rows;
}

}  // namespace

namespace gemm_detail {

// gemm.hpp "K-blocks": g = K when both runs cover K, else the smaller run, which the other run
// must be a multiple of (or cover K).
std::vector<std::int64_t> k_block_starts(const GemmOperand& a, const GemmOperand& b, std::int64_t k,
                                         std::int64_t padded_k) {
  const std::int64_t run_a = k_run_of(a), run_b = k_run_of(b);
  std::int64_t g = k;
  if (run_a < k) g = run_a;
  if (run_b < k) g = std::min(g, run_b);
  for (const auto& [run, which] : {std::pair{run_a, 'A'}, std::pair{run_b, 'B'}}) {
    if (run < k && run % g != 0) {
      throw std::invalid_argument(operand_name(which) + ": its scale blocks run " +
                                  std::to_string(run) +
                                  " elements along K, not a multiple of "
                                  "the other operand's " +
                                  std::to_string(g));
    }
  }
  std::vector<std::int64_t> starts;
  for (std::int64_t s = 0; s < k; s += g) starts.push_back(s);
  starts.push_back(padded_k);  // pad_inner_dim's zeros belong to the last block
  return starts;
}

}  // namespace gemm_detail

namespace {

// 2^(raw exponent) of each code (gemm.hpp hopper model): a subnormal uses the minimum normal
// exponent; zero, NaN and Inf get 0 so that they never win the alignment maximum.
std::array<float, 256> exponent_power_table(Format format) {
  const FormatSpec& f = spec(format);
  std::array<float, 256> table{};
  for (std::uint32_t code = 0; code < 256; ++code) {
    const float value = decode_element(static_cast<std::uint8_t>(code), format);
    if (value == 0.0f || !std::isfinite(value)) continue;
    const int field = static_cast<int>((code & ~f.sign_mask() & 0xFFu) >> f.mantissa_bits);
    table[code] = std::ldexp(1.0f, std::max(field, 1) - f.bias);
  }
  return table;
}

const std::array<float, 256>& value_table(Format format) {
  if (const auto* table = element_decode_table(format)) return *table;
  throw std::invalid_argument(std::string("GEMM code tables: not an element format: ") +
                              spec(format).name);
}

// Where panel `panel` of a quantized operand reads its codes: the code of panel row w < valid
// (rows past the operand's `outer` are padding) at k < the operand's K is
// data[w * o_stride + k * k_stride].
struct PanelSource {
  const std::uint8_t* data;
  std::int64_t o_stride, k_stride, valid, k;
};
PanelSource panel_source(const GemmOperand& op, const gemm_detail::PackedOperand& p,
                         std::int64_t panel) {
  const QuantizedTensor& t = op.tensor;
  const bool k_is_cols = op.k_dim == ReduceDim::kCols;
  const std::int64_t o_stride = k_is_cols ? t.cols : 1, o0 = panel * p.width;
  return {t.data.data() + o0 * o_stride, o_stride, k_is_cols ? 1 : t.cols,
          std::min(p.width, p.outer - o0), k_of(op)};
}

// Fills panel `panel` of dst ([panel][k][width]) with table[code] of the operand's codes and +0
// in its padding (rows past `outer`, k past the operand's K): plain loops over local pointers
// (restrict: the stores cannot change the tensor) instead of pack_panel's call per element.
void pack_codes(const GemmOperand& op, const gemm_detail::PackedOperand& p, std::int64_t panel,
                const float* table, float* dst) {
  const PanelSource source = panel_source(op, p, panel);
  const std::int64_t width = p.width, o_stride = source.o_stride, k_stride = source.k_stride;
  const std::int64_t valid = source.valid, k = source.k;
  const std::uint8_t* __restrict data = source.data;
  const float* __restrict values = table;
  float* __restrict out = dst + panel * p.k * width;
  std::int64_t kk = 0;
  if (k_stride == 1) {
    // K runs along the stored rows: 8 codes of a row per load, w outer within the 8 k.
    for (; kk + 8 <= k; kk += 8) {
      for (std::int64_t w = 0; w < valid; ++w) {
        std::uint64_t codes = 0;
        std::memcpy(&codes, data + w * o_stride + kk, sizeof codes);
        for (std::int64_t i = 0; i < 8; ++i, codes >>= 8) {
          out[(kk + i) * width + w] = values[codes & 0xFF];
        }
      }
    }
  }
  for (; kk < k; ++kk) {
    const std::uint8_t* src = data + kk * k_stride;
    for (std::int64_t w = 0; w < valid; ++w) out[kk * width + w] = values[src[w * o_stride]];
  }
  for (kk = 0; kk < p.k; ++kk) {
    for (std::int64_t w = kk < k ? valid : 0; w < width; ++w) out[kk * width + w] = 0.0f;
  }
}

// What HopperRzLayout stores for each code.
struct RzCode {
  float value = 0.0f;
  std::int8_t exponent = gemm_detail::HopperRzLayout::kNoExponent;
  std::uint8_t low_bit_a = 0, low_bit_b = 0;  // low_bit_bytes of an A and of a B operand
  // A B column's two bytes of each array (the byte twice), as the 16-bit words rz_packer stores.
  std::uint16_t exponent_pair_b = 0, low_bit_pair_b = 0;
};
std::array<RzCode, 256> rz_code_table(Format format);

// The per-code tables of one FP8 format, built once per process (a GEMM of a training step is
// small enough that building them per call cost 10-15% of it).
struct CodeTables {
  std::array<float, 256> values, powers;
  std::array<RzCode, 256> rz;
  // hopper_rz_pack's tables for an A and a B operand; words_exact: whether every value's low 16
  // bits are 0 (so value_high holds it whole).
  gemm_detail::RzWordTables rz_words_a, rz_words_b;
  bool words_exact = true;
};
CodeTables build_code_tables(Format f);
const CodeTables& code_tables(Format format) {
  auto build = [](Format f) { return build_code_tables(f); };
  static const CodeTables e4m3 = build(Format::E4M3), e5m2 = build(Format::E5M2);
  static const CodeTables e2m1 = build(Format::E2M1), e2m3 = build(Format::E2M3),
                          e3m2 = build(Format::E3M2);
  switch (format) {
    case Format::E4M3: return e4m3;
    case Format::E5M2: return e5m2;
    case Format::E2M1: return e2m1;
    case Format::E2M3: return e2m3;
    case Format::E3M2: return e3m2;
    default: break;
  }
  throw std::invalid_argument(std::string("GEMM code tables: not an element format: ") +
                              spec(format).name);
}

// Calls f(w, o, kk) for every valid output o = panel * width + w of the panel and kk < k, k outer:
// the packed panel is written in order, and a stored row [o, K] is read along its length by the
// next kk (the panel's width rows stay in L1 meanwhile).
template <typename F>
void for_panel(std::int64_t panel, std::int64_t width, std::int64_t outer, std::int64_t k, F f) {
  const std::int64_t o0 = panel * width;
  const std::int64_t valid = std::min(width, outer - o0);
  for (std::int64_t kk = 0; kk < k; ++kk) {
    for (std::int64_t w = 0; w < valid; ++w) f(w, o0 + w, kk);
  }
}

// Fills dst ([panel][k][width], pre-zeroed) with f(o, k) for valid o.
template <typename Value>
void pack_panel(std::int64_t panel, std::int64_t width, std::int64_t outer, std::int64_t k,
                std::int64_t padded_k, float* dst, Value value) {
  float* base = dst + panel * padded_k * width;
  for_panel(panel, width, outer, k, [&](std::int64_t w, std::int64_t o, std::int64_t kk) {
    base[kk * width + w] = value(o, kk);
  });
}

// The 16-bit word of bytes (first, second) in memory order.
std::uint16_t byte_pair(std::uint8_t first, std::uint8_t second) {
  const std::uint8_t bytes[2] = {first, second};
  std::uint16_t word;
  std::memcpy(&word, bytes, sizeof word);
  return word;
}

// The exponent of the lowest set bit of a finite nonzero x: the largest l with x / 2^l an integer.
int lowest_bit_exponent(float x) {
  int l = std::ilogb(x);
  while (std::fmod(std::fabs(x), std::ldexp(1.0f, l)) != 0.0f) --l;
  return l;
}

// The raw exponent is exponent_power_table's, kNoExponent where that table has 0.
std::array<RzCode, 256> rz_code_table(Format format) {
  using L = gemm_detail::HopperRzLayout;
  std::array<RzCode, 256> table{};
  const auto values = value_table(format);
  const auto powers = exponent_power_table(format);
  for (std::size_t code = 0; code < 256; ++code) {
    const float x = values[code];
    RzCode& c = table[code];
    c.value = x;
    if (powers[code] != 0.0f) c.exponent = static_cast<std::int8_t>(std::ilogb(powers[code]));
    // Bit 7 of the byte carries the sign class (HopperRzLayout); the sum wraps modulo 256.
    const bool negative = x != 0.0f ? x < 0.0f : true;  // A's zero as negative
    const bool positive = x != 0.0f ? x > 0.0f : true;  // B's zero as positive
    // NaN and Inf codes never reach hopper_rz_tile (gemm.cpp); they get a zero's bytes.
    const int l = x != 0.0f && std::isfinite(x) ? lowest_bit_exponent(x) : L::kZeroLowBit;
    c.low_bit_a = static_cast<std::uint8_t>((l + (negative ? 128 : 0)) & 0xFF);
    c.low_bit_b = static_cast<std::uint8_t>((l + 64 + (positive ? 128 : 0)) & 0xFF);
    c.exponent_pair_b =
        byte_pair(static_cast<std::uint8_t>(c.exponent), static_cast<std::uint8_t>(c.exponent));
    c.low_bit_pair_b = byte_pair(c.low_bit_b, c.low_bit_b);
  }
  return table;
}

// out[(kk - k0) * kWidth + w] = data[kk * k_stride + w] for w < kWidth, kk in [k0, k1).
template <std::int64_t kWidth>
void copy_rows(const std::uint8_t* __restrict data, std::int64_t k_stride, std::int64_t k0,
               std::int64_t k1, std::uint8_t* __restrict out) {
  for (std::int64_t kk = k0; kk < k1; ++kk) {
    std::memcpy(out + (kk - k0) * kWidth, data + kk * k_stride, kWidth);
  }
}

// The codes of the panel's valid rows at k in [k0, k1) in panel order: out[(kk - k0) * width +
// w] (out is zeroed by the caller: the padding's code 0), for an operand whose K does not run
// along its stored rows (those take hopper_rz_codes).
void panel_codes(const PanelSource source, std::int64_t width, std::int64_t k0, std::int64_t k1,
                 std::uint8_t* __restrict out) {
  const std::int64_t o_stride = source.o_stride, k_stride = source.k_stride;
  const std::int64_t valid = source.valid;
  const std::uint8_t* __restrict data = source.data;
  // A full A panel's k row is a copy of 6 codes: two moves per k instead of a memcpy call per k.
  if (o_stride == 1 && valid == width && width == gemm_detail::kTileRows) {
    return copy_rows<gemm_detail::kTileRows>(data, k_stride, k0, k1, out);
  }
  for (std::int64_t kk = k0; kk < k1; ++kk) {
    if (o_stride == 1) {
      std::memcpy(out + (kk - k0) * width, data + kk * k_stride, static_cast<std::size_t>(valid));
    } else {
      for (std::int64_t w = 0; w < valid; ++w) {
        out[(kk - k0) * width + w] = data[w * o_stride + kk * k_stride];
      }
    }
  }
}

CodeTables build_code_tables(Format f) {
  CodeTables t{value_table(f), exponent_power_table(f), rz_code_table(f), {}, {}, true};
  for (std::size_t code = 0; code < 256; ++code) {
    const RzCode& c = t.rz[code];
    const auto bits = std::bit_cast<std::uint32_t>(c.value);
    t.words_exact = t.words_exact && (bits & 0xFFFFu) == 0;
    const auto high = static_cast<std::uint16_t>(bits >> 16);
    t.rz_words_a.value_high[code] = t.rz_words_b.value_high[code] = high;
    t.rz_words_a.exponent[code] = static_cast<std::uint8_t>(c.exponent);
    t.rz_words_a.low_bit[code] = c.low_bit_a;
    t.rz_words_b.exponent[code] = c.exponent_pair_b;
    t.rz_words_b.low_bit[code] = c.low_bit_pair_b;
  }
  return t;
}

// Sizes `p` for the operand in HopperRzLayout and returns the function that fills its panel
// `panel`, as quantized_packer does for the other packings.
std::function<void(std::int64_t)> rz_packer(const GemmOperand& op, std::int64_t width,
                                            std::int64_t padded_k, gemm_detail::PackedOperand& p) {
  using L = gemm_detail::HopperRzLayout;
  const bool is_a = width == gemm_detail::kTileRows;
  const std::int64_t byte_stride = is_a ? L::kAExponentBytes : L::kBExponentBytes;
  // Not cleared: the packer writes every element, the padding's zeros included.
  p.values.resize(static_cast<std::size_t>(p.panels * padded_k * width));
  p.exponent_bytes.resize(static_cast<std::size_t>(p.panels * padded_k * byte_stride));
  p.low_bit_bytes.resize(static_cast<std::size_t>(p.panels * padded_k * byte_stride));
  const CodeTables& tables = code_tables(op.tensor.format);
  // gemm.cpp packs this layout only where hopper_rz_tile runs (AVX-512) and for FP8 codes, whose
  // values all fit in their high 16 bits.
  if (!gemm_detail::hopper_rz_available() || !tables.words_exact) {
    throw std::logic_error(std::string("hopper_rz packing of ") + spec(op.tensor.format).name +
                           " codes: needs an AVX-512 target and values exact in 16 bits");
  }
  const gemm_detail::RzWordTables* words = is_a ? &tables.rz_words_a : &tables.rz_words_b;
  return [&op, &p, byte_stride, words, is_a](std::int64_t panel) {
    const PanelSource source = panel_source(op, p, panel);
    const std::int64_t panel_width = p.width, valid = source.valid, k = source.k;
    float* v = p.values.data() + panel * p.k * panel_width;
    std::int8_t* e = p.exponent_bytes.data() + panel * p.k * byte_stride;
    std::uint8_t* l = p.low_bit_bytes.data() + panel * p.k * byte_stride;
    // The codes of kChunk k in panel order (rows past `valid` and k past K as code 0, +0), then
    // their values and bytes by hopper_rz_pack's table lookups.
    constexpr std::int64_t kChunk = 64;  // a multiple of 16 (hopper_rz_pack's A step)
    alignas(64) std::uint8_t chunk[kChunk * gemm_detail::kTileCols];
    for (std::int64_t k0 = 0; k0 < p.k; k0 += kChunk) {
      const std::int64_t k_here = std::min(kChunk, p.k - k0);
      const std::int64_t k_end = std::min(k0 + k_here, k);
      const bool full = valid == panel_width && k_end - k0 == k_here;
      if (full && !is_a && source.k_stride != 1 && source.o_stride == 1) {
        // A full B panel whose K runs down the stored rows: each k's 32 codes lie in place in
        // the tensor, in panel order, and are packed from there without a copy into chunk.
        gemm_detail::hopper_rz_pack(source.data + k0 * source.k_stride, source.k_stride, k_here,
                                    panel_width, *words, v + k0 * panel_width, e + k0 * byte_stride,
                                    l + k0 * byte_stride);
        continue;
      }
      // Cleared only where the codes below leave bytes unwritten: k past K (padding, which every
      // output reads) and rows past `valid` (the last panel; only outputs past M or N read them,
      // and those are not written to C, but the panel stays defined).
      if (!full) std::memset(chunk, 0, sizeof chunk);
      if (source.k_stride == 1) {
        gemm_detail::hopper_rz_codes(source.data, source.o_stride, valid, k0, k_end, panel_width,
                                     chunk);
      } else {
        panel_codes(source, panel_width, k0, k_end, chunk);
      }
      gemm_detail::hopper_rz_pack(chunk, panel_width, k_here, panel_width, *words,
                                  v + k0 * panel_width, e + k0 * byte_stride, l + k0 * byte_stride);
    }
  };
}

// Sizes `p` for the operand and returns the function that fills its panel `panel` (values,
// powers when asked, block scales), so that both operands are packed in one parallel region.
std::function<void(std::int64_t)> quantized_packer(const GemmOperand& op, std::int64_t width,
                                                   std::int64_t padded_k,
                                                   const std::vector<std::int64_t>& block_starts,
                                                   gemm_detail::Packing packing,
                                                   gemm_detail::PackedOperand& p) {
  p.outer = outer_of(op);
  p.width = width;
  p.panels = (p.outer + width - 1) / width;
  p.k = padded_k;
  const bool rz = packing == gemm_detail::Packing::kHopperRz;
  const bool with_powers = packing == gemm_detail::Packing::kHopperPowers;
  const auto size = static_cast<std::size_t>(p.panels * padded_k * width);
  std::function<void(std::int64_t)> fill_rz;
  if (rz) {
    fill_rz = rz_packer(op, width, padded_k, p);
  } else {
    p.values.resize(size);  // not zeroed: pack_codes writes every element, padding included
  }
  if (with_powers) p.exponent_powers.resize(size);
  const std::int64_t blocks = static_cast<std::int64_t>(block_starts.size()) - 1;
  p.block_scales.assign(static_cast<std::size_t>(p.panels * blocks * width), 1.0f);
  const CodeTables& tables = code_tables(op.tensor.format);
  return [&op, blocks, &p, &block_starts, rz, with_powers, fill_rz, &values = tables.values,
          &powers = tables.powers](std::int64_t panel) {
    const QuantizedTensor& t = op.tensor;
    const bool k_is_cols = op.k_dim == ReduceDim::kCols;
    if (rz) {
      fill_rz(panel);
    } else {
      pack_codes(op, p, panel, values.data(), p.values.data());
    }
    if (with_powers) pack_codes(op, p, panel, powers.data(), p.exponent_powers.data());
    const std::int64_t valid = panel_source(op, p, panel).valid;
    for (std::int64_t j = 0; j < blocks; ++j) {
      float* scales = p.block_scales.data() + (panel * blocks + j) * p.width;
      const std::int64_t k0 = block_starts[static_cast<std::size_t>(j)];
      for (std::int64_t w = 0; w < valid; ++w) {
        const std::int64_t o = panel * p.width + w;
        scales[w] = k_is_cols ? t.scale_inv_at(o, k0) : t.scale_inv_at(k0, o);
      }
    }
  };
}

void check_dense(const DenseOperand& op, char which) {
  checked_element_count(operand_name(which).c_str(), op.rows, op.cols, op.data.size(),
                        "data.size()");
}

std::function<void(std::int64_t)> dense_packer(const DenseOperand& op, std::int64_t width,
                                               bool round_to_bf16, gemm_detail::PackedOperand& p) {
  const bool k_is_cols = op.k_dim == ReduceDim::kCols;
  p.outer = k_is_cols ? op.rows : op.cols;
  p.width = width;
  p.panels = (p.outer + width - 1) / width;
  p.k = k_is_cols ? op.cols : op.rows;
  p.values.assign(static_cast<std::size_t>(p.panels * p.k * width), 0.0f);
  p.block_scales.assign(static_cast<std::size_t>(p.panels * width), 1.0f);
  return [&op, &p, k_is_cols, round_to_bf16](std::int64_t panel) {
    pack_panel(panel, p.width, p.outer, p.k, p.k, p.values.data(),
               [&](std::int64_t o, std::int64_t kk) {
                 const float x = k_is_cols ? op.data[static_cast<std::size_t>(o * op.cols + kk)]
                                           : op.data[static_cast<std::size_t>(kk * op.cols + o)];
                 return round_to_bf16 ? gemm_detail::rounded_to_bf16(x) : x;
               });
  };
}

// Fills both operands' panels in one parallel region.
void pack_both(gemm_detail::GemmPlan& plan, const std::function<void(std::int64_t)>& fill_a,
               const std::function<void(std::int64_t)>& fill_b, int threads) {
  const std::int64_t a_panels = plan.a.panels;
  parallel_units(a_panels + plan.b.panels, threads, [&](std::int64_t u) {
    if (u < a_panels) {
      fill_a(u);
    } else {
      fill_b(u - a_panels);
    }
  });
}

}  // namespace

GemmShape gemm_shape(const GemmOperand& a, const GemmOperand& b) {
  check_tensor(a.tensor, 'A');
  check_tensor(b.tensor, 'B');
  const std::int64_t k = k_of(a);
  if (k_of(b) != k) {
    throw std::invalid_argument("GEMM operands disagree on K: A has " + std::to_string(k) +
                                ", B has " + std::to_string(k_of(b)) +
                                " (check each operand's k_dim)");
  }
  if (k < 1) throw std::invalid_argument("GEMM K must be >= 1, got " + std::to_string(k));
  // C is M x N: sized from this shape by every caller, so its count must not overflow either.
  checked_element_count("GEMM output C", outer_of(a), outer_of(b));
  return {outer_of(a), outer_of(b), k};
}

namespace gemm_detail {

void check_threads(int threads) {
  if (threads < 1) {
    throw std::invalid_argument("GEMM threads must be >= 1, got " + std::to_string(threads));
  }
}

std::vector<KChunk> k_chunks(const std::vector<std::int64_t>& block_starts) {
  std::vector<KChunk> chunks;
  KChunk current;
  auto flush = [&] {
    if (current.k_end > current.k_begin) chunks.push_back(current);
  };
  const std::int64_t blocks = static_cast<std::int64_t>(block_starts.size()) - 1;
  for (std::int64_t j = 0; j < blocks; ++j) {
    const std::int64_t begin = block_starts[static_cast<std::size_t>(j)];
    const std::int64_t end = block_starts[static_cast<std::size_t>(j + 1)];
    if (end - begin > kKChunk) {
      flush();
      for (std::int64_t k = begin; k < end; k += kKChunk) {
        chunks.push_back({k, std::min(k + kKChunk, end), j});
      }
      current = {end, end, j + 1};
    } else {
      if (current.k_end - current.k_begin + (end - begin) > kKChunk) {
        flush();
        current = {begin, begin, j};
      }
      current.k_end = end;
    }
  }
  flush();
  return chunks;
}

TileArgs GemmPlan::tile(std::int64_t a_panel, std::int64_t b_panel) const {
  TileArgs t;
  t.a = a.panel_values(a_panel);
  t.b = b.panel_values(b_panel);
  if (!a.exponent_powers.empty()) t.a_powers = a.panel_powers(a_panel);
  if (!b.exponent_powers.empty()) t.b_powers = b.panel_powers(b_panel);
  if (!a.exponent_bytes.empty()) {  // HopperRzLayout
    t.a_exponents = a.exponent_bytes.data() + a_panel * a.k * HopperRzLayout::kAExponentBytes;
    t.b_exponents = b.exponent_bytes.data() + b_panel * b.k * HopperRzLayout::kBExponentBytes;
    t.a_low_bits = a.low_bit_bytes.data() + a_panel * a.k * HopperRzLayout::kAExponentBytes;
    t.b_low_bits = b.low_bit_bytes.data() + b_panel * b.k * HopperRzLayout::kBExponentBytes;
  }
  t.blocks = blocks();
  t.a_scales = a.block_scales.data() + a_panel * t.blocks * a.width;
  t.b_scales = b.block_scales.data() + b_panel * t.blocks * b.width;
  t.block_starts = block_starts.data();
  return t;
}

bool has_non_finite_code(const QuantizedTensor& t) {
  // The non-finite codes of an FP8 format are those whose exponent field is all ones (E5M2) or
  // whose magnitude bits are (E4M3): (code & mask) == mask for the mask their magnitude bits share,
  // which the table check below confirms, so the scan is a loop the compiler vectorizes.
  const auto& values = code_tables(t.format).values;
  std::uint8_t mask = 0x7F;
  for (std::uint32_t code = 0; code < 256; ++code) {
    if (!std::isfinite(values[code])) mask = static_cast<std::uint8_t>(mask & code);
  }
  bool mask_exact = mask != 0;
  for (std::uint32_t code = 0; code < 256; ++code) {
    mask_exact = mask_exact && (((code & mask) == mask) == !std::isfinite(values[code]));
  }
  if (!mask_exact) {
    return std::any_of(t.data.begin(), t.data.end(),
                       [&](std::uint8_t code) { return !std::isfinite(values[code]); });
  }
  std::uint8_t any = 0;
  for (const std::uint8_t code : t.data) any |= static_cast<std::uint8_t>((code & mask) == mask);
  return any != 0;
}

GemmPlan make_quantized_plan(const GemmOperand& a, const GemmOperand& b, bool pad_inner_dim,
                             Packing packing, int threads) {
  check_threads(threads);
  GemmPlan plan;
  plan.shape = gemm_shape(a, b);
  const std::int64_t k = plan.shape.k;
  if (pad_inner_dim) {
    plan.shape.k = (k + kPadInnerDimMultiple - 1) / kPadInnerDimMultiple * kPadInnerDimMultiple;
  }
  plan.block_starts = gemm_detail::k_block_starts(a, b, k, plan.shape.k);
  plan.chunks = k_chunks(plan.block_starts);
  const auto fill_a =
      quantized_packer(a, kTileRows, plan.shape.k, plan.block_starts, packing, plan.a);
  const auto fill_b =
      quantized_packer(b, kTileCols, plan.shape.k, plan.block_starts, packing, plan.b);
  pack_both(plan, fill_a, fill_b, threads);
  return plan;
}

GemmShape dense_gemm_shape(const DenseOperand& a, const DenseOperand& b) {
  check_dense(a, 'A');
  check_dense(b, 'B');
  const std::int64_t k_a = a.k_dim == ReduceDim::kCols ? a.cols : a.rows;
  const std::int64_t k_b = b.k_dim == ReduceDim::kCols ? b.cols : b.rows;
  if (k_a != k_b) {
    throw std::invalid_argument("GEMM operands disagree on K: A has " + std::to_string(k_a) +
                                ", B has " + std::to_string(k_b) + " (check each operand's k_dim)");
  }
  const std::int64_t m = a.k_dim == ReduceDim::kCols ? a.rows : a.cols;
  const std::int64_t n = b.k_dim == ReduceDim::kCols ? b.rows : b.cols;
  // As in gemm_shape: C is sized from this shape, so its count must not overflow either.
  checked_element_count("GEMM output C", m, n);
  return {m, n, k_a};
}

GemmPlan make_dense_plan(const DenseOperand& a, const DenseOperand& b, bool round_to_bf16,
                         int threads) {
  check_threads(threads);
  GemmPlan plan;
  plan.shape = dense_gemm_shape(a, b);
  const auto fill_a = dense_packer(a, kTileRows, round_to_bf16, plan.a);
  const auto fill_b = dense_packer(b, kTileCols, round_to_bf16, plan.b);
  pack_both(plan, fill_a, fill_b, threads);
  plan.block_starts = {0, plan.shape.k};
  plan.chunks = k_chunks(plan.block_starts);
  return plan;
}

void check_output(const GemmShape& shape, std::span<const float> bias, std::size_t out_size) {
  if (!bias.empty() && static_cast<std::int64_t>(bias.size()) != shape.n) {
    throw std::invalid_argument("GEMM bias has " + std::to_string(bias.size()) +
                                " values, expected N = " + std::to_string(shape.n));
  }
  checked_element_count("GEMM output C (M x N)", shape.m, shape.n, out_size, "out.size()");
}

}  // namespace gemm_detail
}  // namespace fp8lab::sim
