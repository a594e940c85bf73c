// block_scaled_gemm(): the Blackwell block-scaled MMA model of block_scaled.hpp. Operands are
// decoded once into small integers (significand m with 3 fraction bits, exponent e), so that a
// step is integer shifts and adds; truncated_sum.hpp does the alignment and the final rounding.
#include "sim/gemm/block_scaled.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/cast.hpp"
#include "sim/element_count.hpp"
#include "sim/gemm/block_scaled_lanes.hpp"
#include "sim/gemm/block_scaled_terms.hpp"
#include "sim/gemm/truncated_sum.hpp"
#include "sim/name_table.hpp"
#include "sim/parallel.hpp"

namespace fp8lab::sim {

constexpr sim::NameTable<BlockScaledPath, 3> kBlockScaledPathNames{
    {{BlockScaledPath::kAuto, "auto"},
     {BlockScaledPath::kMxf8f6f4, "mxf8f6f4"},
     {BlockScaledPath::kMxf4Nvf4, "mxf4nvf4"}}};
const char* to_string(BlockScaledPath path) { return sim::name_in(kBlockScaledPathNames, path); }

namespace {

using gemm_detail::fp32_term;
using gemm_detail::round_toward_zero_fp32;
using gemm_detail::shift_toward_zero;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

using Term = gemm_detail::BlockTerm;

bool is_element_format(Format f) {
  return f == Format::E4M3 || f == Format::E5M2 || f == Format::E3M2 || f == Format::E2M3 ||
         f == Format::E2M1;
}

struct PreparedOperand {
  std::int64_t outer = 0, k = 0, blocks = 0;
  std::vector<std::int8_t> m, e;  // [outer][k]
  std::vector<float> value;       // [outer][k]
  std::vector<std::uint8_t> special;
  std::vector<std::int8_t> twice;  // E2M1 only: 2 x value, an integer in [-12, 12]
  // Per [outer][32-element step]: whether an element or the scale of that step is NaN or Inf.
  std::vector<std::uint8_t> step_special;
  std::vector<std::int16_t> scale_m, scale_e;  // [outer][blocks]
  std::vector<std::uint8_t> scale_nan;
  std::vector<float> scale_value;
};

// Fills n terms' columns (significand, exponent, NaN/Inf flag, value) from term_at(i); elements
// and scales keep the same four columns, at different widths.
template <class Int, class TermAt>
void fill_columns(std::size_t n, std::vector<Int>& m, std::vector<Int>& e,
                  std::vector<std::uint8_t>& special, std::vector<float>& value, TermAt term_at) {
  m.resize(n);
  e.resize(n);
  special.resize(n);
  value.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Term t = term_at(i);
    m[i] = t.m;
    e[i] = t.e;
    special[i] = t.special ? 1 : 0;
    value[i] = t.value;
  }
}

PreparedOperand prepare(const BlockScaledOperand& x) {
  PreparedOperand p;
  p.outer = x.outer;
  p.k = x.k;
  p.blocks = x.k / x.block;
  const auto table = gemm_detail::block_element_table(x.format);
  const auto n = static_cast<std::size_t>(x.outer * x.k);
  // check_operand has checked every code.
  fill_columns(n, p.m, p.e, p.special, p.value, [&](std::size_t i) { return table[x.codes[i]]; });
  if (x.format == Format::E2M1) {
    p.twice.resize(n);
    for (std::size_t i = 0; i < n; ++i) p.twice[i] = static_cast<std::int8_t>(2.0f * p.value[i]);
  }
  const auto s = static_cast<std::size_t>(x.outer * p.blocks);
  fill_columns(s, p.scale_m, p.scale_e, p.scale_nan, p.scale_value, [&](std::size_t i) {
    return gemm_detail::block_scale_term(x.scales[i], x.scale_type);
  });
  // A UE8M0 scale's exponent (-127..128) is its code less the bias; it does not fit a Term's int8.
  if (x.scale_type == BlockScaleType::kUe8m0) {
    for (std::size_t i = 0; i < s; ++i) {
      p.scale_e[i] = static_cast<std::int16_t>(x.scales[i] - 127);
    }
  }
  if (x.k % kMxf8f6f4StepK == 0 && x.block == kMxf8f6f4StepK) {
    const std::int64_t steps = x.k / kMxf8f6f4StepK;
    p.step_special.assign(static_cast<std::size_t>(x.outer * steps), 0);
    for (std::int64_t r = 0; r < x.outer; ++r) {
      for (std::int64_t st = 0; st < steps; ++st) {
        const auto at = static_cast<std::size_t>(r * steps + st);
        std::uint8_t any = p.scale_nan[at];
        for (std::int64_t k = 0; k < kMxf8f6f4StepK; ++k) {
          any |= p.special[static_cast<std::size_t>(r * x.k + st * kMxf8f6f4StepK + k)];
        }
        p.step_special[at] = any;
      }
    }
  }
  return p;
}

// The IEEE sum of a step's term values, for a step with a NaN or infinite term (block_scaled.hpp):
// always NaN or an Inf.
float special_step(const PreparedOperand& a, const PreparedOperand& b, std::int64_t row_a,
                   std::int64_t row_b, std::int64_t k0, std::int64_t k1, std::int64_t block,
                   float c) {
  double sum = c;
  for (std::int64_t k = k0; k < k1; ++k) {
    const std::size_t ia = static_cast<std::size_t>(row_a * a.k + k);
    const std::size_t ib = static_cast<std::size_t>(row_b * b.k + k);
    const std::size_t sa = static_cast<std::size_t>(row_a * a.blocks + k / block);
    const std::size_t sb = static_cast<std::size_t>(row_b * b.blocks + k / block);
    sum += static_cast<double>(a.value[ia]) * b.value[ib] * a.scale_value[sa] * b.scale_value[sb];
  }
  return static_cast<float>(sum);
}

// One kMxf8f6f4 step: 32 elements from k0 (one UE8M0 block of each operand).
float mxf8f6f4_step(const PreparedOperand& a, const PreparedOperand& b, std::int64_t row_a,
                    std::int64_t row_b, std::int64_t k0, float c) {
  const std::size_t base_a = static_cast<std::size_t>(row_a * a.k + k0);
  const std::size_t base_b = static_cast<std::size_t>(row_b * b.k + k0);
  const std::size_t sa = static_cast<std::size_t>(row_a * a.blocks + k0 / kMxf8f6f4StepK);
  const std::size_t sb = static_cast<std::size_t>(row_b * b.blocks + k0 / kMxf8f6f4StepK);
  // One flag per step and operand (prepare): a NaN or Inf element or a NaN scale.
  if (!std::isfinite(c) || a.step_special[sa] || b.step_special[sb]) {
    return special_step(a, b, row_a, row_b, k0, k0 + kMxf8f6f4StepK, kMxf8f6f4StepK, c);
  }
  const int scale_e = a.scale_e[sa] + b.scale_e[sb];
  std::array<int, kMxf8f6f4StepK> product{}, exponent{};
  // E_max over all 33 terms; a zero term (a zero product, c = 0) counts with E = -133.
  gemm_detail::Fp32Term ct{0, kMxf8f6f4ZeroExponent};
  if (c != 0.0f) ct = fp32_term(c);
  int e_max = ct.e;
  for (std::int64_t k = 0; k < kMxf8f6f4StepK; ++k) {
    product[k] = a.m[base_a + k] * b.m[base_b + k];
    exponent[k] = product[k] == 0 ? kMxf8f6f4ZeroExponent
                                  : a.e[base_a + k] + b.e[base_b + k] + scale_e;
    e_max = std::max(e_max, exponent[k]);
  }
  // A product is m_a m_b 2^(E - 6); on the grid 2^(E_max - 25) that is a shift by
  // E - E_max + 19. c is m_c 2^(e_c - 23): a shift by e_c - E_max + 2.
  // Branch-free, so that the loop vectorizes: |m_a m_b| 2^19 < 2^27 shifted right by
  // E_max - E >= 0 (capped at 63: the term is below the grid) is the truncated magnitude; a zero
  // product contributes 0 whatever its exponent.
  std::int64_t sum = c != 0.0f ? shift_toward_zero(ct.m, ct.e - e_max + 2) : 0;
  for (std::int64_t k = 0; k < kMxf8f6f4StepK; ++k) {
    const std::int64_t magnitude =
        (static_cast<std::int64_t>(product[k] < 0 ? -product[k] : product[k]) << 19) >>
        std::min(e_max - exponent[k], 63);
    sum += product[k] < 0 ? -magnitude : magnitude;
  }
  return round_toward_zero_fp32(sum, e_max - kMxf8f6f4FractionBits);
}

// One kMxf4Nvf4 step: groups [g0, g1) of 16 elements (at most 4; fewer at the end of K, the rest
// zero padding).
float mxf4nvf4_step(const PreparedOperand& a, const PreparedOperand& b, std::int64_t row_a,
                    std::int64_t row_b, std::int64_t g0, std::int64_t g1, std::int64_t block,
                    float c) {
  constexpr int kGroups = static_cast<int>(kMxf4Nvf4StepK / kMxf4Nvf4GroupK);
  const std::int64_t groups = g1 - g0;
  std::array<std::int64_t, kGroups> term{};
  std::array<int, kGroups> exponent{};
  bool nan_scale = false;
  for (std::int64_t g = 0; g < groups; ++g) {
    const std::int64_t k0 = (g0 + g) * kMxf4Nvf4GroupK;
    const std::size_t sa = static_cast<std::size_t>(row_a * a.blocks + k0 / block);
    const std::size_t sb = static_cast<std::size_t>(row_b * b.blocks + k0 / block);
    nan_scale = nan_scale || a.scale_nan[sa] || b.scale_nan[sb];
    // 2x is an integer for every E2M1 value (PreparedOperand::twice).
    std::int64_t dot = 0;  // sum of (2a)(2b) = 4 p, exact
    bool all_zero = true;
    const std::size_t ia = static_cast<std::size_t>(row_a * a.k + k0);
    const std::size_t ib = static_cast<std::size_t>(row_b * b.k + k0);
    int nonzero = 0;
    for (std::int64_t k = 0; k < kMxf4Nvf4GroupK; ++k) {
      const int product = a.twice[ia + k] * b.twice[ib + k];
      nonzero |= product;
      dot += product;
    }
    all_zero = nonzero == 0;
    const int scale_m = a.scale_m[sa] * b.scale_m[sb];  // significands times 8 each
    if (all_zero || scale_m == 0) {
      exponent[g] = kMxf4Nvf4ZeroExponent;
      term[g] = 0;
    } else {
      exponent[g] = a.scale_e[sa] + b.scale_e[sb];
      term[g] = dot * scale_m;  // value: term 2^(E - 8) (4 p and the two 8s)
    }
  }
  if (nan_scale || std::isnan(c)) return kNan;
  if (std::isinf(c)) return c;
  int e_max = groups < kGroups ? kMxf4Nvf4ZeroExponent : std::numeric_limits<int>::min();
  gemm_detail::Fp32Term ct{0, kMxf4Nvf4ZeroExponent};
  if (c != 0.0f) ct = fp32_term(c);
  e_max = std::max(e_max, ct.e);
  for (std::int64_t g = 0; g < groups; ++g) e_max = std::max(e_max, exponent[g]);
  // Grid 2^(E_max - 35): a group term shifts by E - E_max + 27, c by e_c - E_max + 12.
  std::int64_t sum = c != 0.0f ? shift_toward_zero(ct.m, ct.e - e_max + 12) : 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    if (term[g] != 0) sum += shift_toward_zero(term[g], exponent[g] - e_max + 27);
  }
  return round_toward_zero_fp32(sum, e_max - kMxf4Nvf4FractionBits);
}

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("block_scaled_gemm: " + what);
}

void check_operand(const BlockScaledOperand& x, const char* name) {
  const std::string n(name);
  const std::int64_t count = checked_element_count("block_scaled_gemm", x.outer, x.k);
  if (static_cast<std::int64_t>(x.codes.size()) != count) {
    fail(n + ".codes has " + std::to_string(x.codes.size()) +
         " codes, expected outer * k = " + std::to_string(count));
  }
  if (!is_element_format(x.format)) {
    fail(n + ".format " + spec(x.format).name + " is not an element format; accepted: e4m3, " +
         "e5m2, e3m2, e2m3, e2m1");
  }
  const std::uint32_t code_limit = 1u << spec(x.format).total_bits();
  // The largest code first (a loop that vectorizes), the first bad one only if there is one.
  std::uint8_t largest = 0;
  for (const std::uint8_t code : x.codes) largest = std::max(largest, code);
  for (std::size_t i = 0; largest >= code_limit && i < x.codes.size(); ++i) {
    if (x.codes[i] >= code_limit) {
      fail(n + ".codes[" + std::to_string(i) + "] = " + std::to_string(x.codes[i]) + " is not an " +
           spec(x.format).name + " code (0.." + std::to_string(code_limit - 1) + ")");
    }
  }
  if (x.block != 16 && x.block != 32) {
    fail(n + ".block = " + std::to_string(x.block) + "; accepted: 16, 32");
  }
  if (x.k % x.block != 0) {
    fail(n + ".k = " + std::to_string(x.k) +
         " is not a multiple of block = " + std::to_string(x.block));
  }
  if (static_cast<std::int64_t>(x.scales.size()) != x.outer * (x.k / x.block)) {
    fail(n + ".scales has " + std::to_string(x.scales.size()) +
         " bytes, expected outer * k / block = " + std::to_string(x.outer * (x.k / x.block)));
  }
}

}  // namespace

BlockScaledPath resolve_block_scaled_path(const BlockScaledOperand& a, const BlockScaledOperand& b,
                                          BlockScaledPath requested) {
  check_operand(a, "a");
  check_operand(b, "b");
  if (a.k != b.k) fail("a.k = " + std::to_string(a.k) + " but b.k = " + std::to_string(b.k));
  const bool fp4 = a.format == Format::E2M1 && b.format == Format::E2M1;
  const BlockScaledPath path =
      requested != BlockScaledPath::kAuto
          ? requested
          : (fp4 ? BlockScaledPath::kMxf4Nvf4 : BlockScaledPath::kMxf8f6f4);
  if (path == BlockScaledPath::kMxf8f6f4) {
    for (const auto* x : {&a, &b}) {
      if (x->block != 32 || x->scale_type != BlockScaleType::kUe8m0) {
        fail(std::string(x == &a ? "a" : "b") +
             ": the mxf8f6f4 path takes UE8M0 scales per 32 elements (block = 32, scale_type "
             "ue8m0)");
      }
    }
    return path;
  }
  if (!fp4) fail("the mxf4nvf4 path takes E2M1 operands only (a.format and b.format e2m1)");
  if (a.block != b.block || a.scale_type != b.scale_type) {
    fail("the mxf4nvf4 path takes one scale type and block for both operands (a and b differ)");
  }
  if (a.scale_type == BlockScaleType::kUe4m3 && a.block != 16) {
    fail("UE4M3 scales come per 16 elements (block = 16)");
  }
  return path;
}

namespace {

// Checks the call (block_scaled.hpp) and returns the path it runs.
BlockScaledPath check_call(const BlockScaledOperand& a, const BlockScaledOperand& b,
                           const BlockScaledGemmOptions& options, std::span<float> out) {
  const BlockScaledPath path = resolve_block_scaled_path(a, b, options.path);
  if (options.threads < 1) fail("threads = " + std::to_string(options.threads) + "; must be >= 1");
  const std::int64_t mn = checked_element_count("block_scaled_gemm", a.outer, b.outer);
  if (static_cast<std::int64_t>(out.size()) != mn) {
    fail("out has " + std::to_string(out.size()) +
         " values, expected M * N = " + std::to_string(mn));
  }
  if (!options.c.empty() && static_cast<std::int64_t>(options.c.size()) != mn) {
    fail("c has " + std::to_string(options.c.size()) +
         " values, expected 0 or M * N = " + std::to_string(mn));
  }
  return path;
}

// Output (i, j) of D: the steps along K chained through c, NaN canonical.
float reference_output(const PreparedOperand& pa, const PreparedOperand& pb, BlockScaledPath path,
                       std::int64_t block, std::int64_t i, std::int64_t j, float c) {
  const std::int64_t k = pa.k, groups = k / kMxf4Nvf4GroupK;
  constexpr std::int64_t kGroupsPerStep = kMxf4Nvf4StepK / kMxf4Nvf4GroupK;
  if (path == BlockScaledPath::kMxf8f6f4) {
    for (std::int64_t k0 = 0; k0 < k; k0 += kMxf8f6f4StepK) {
      c = mxf8f6f4_step(pa, pb, i, j, k0, c);
    }
  } else {
    for (std::int64_t g0 = 0; g0 < groups; g0 += kGroupsPerStep) {
      c = mxf4nvf4_step(pa, pb, i, j, g0, std::min(groups, g0 + kGroupsPerStep), block, c);
    }
  }
  return std::isnan(c) ? std::bit_cast<float>(0x7FFFFFFFu) : c;
}

}  // namespace

namespace reference {

void block_scaled_gemm_into(const BlockScaledOperand& a, const BlockScaledOperand& b,
                            const BlockScaledGemmOptions& options, std::span<float> out) {
  const BlockScaledPath path = check_call(a, b, options, out);
  const PreparedOperand pa = prepare(a);
  const PreparedOperand pb = prepare(b);
  const std::int64_t n = b.outer;
  parallel_units(a.outer, options.threads, [&](std::int64_t i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto at = static_cast<std::size_t>(i * n + j);
      out[at] =
          reference_output(pa, pb, path, a.block, i, j, options.c.empty() ? 0.0f : options.c[at]);
    }
  });
}

}  // namespace reference

void block_scaled_gemm_into(const BlockScaledOperand& a, const BlockScaledOperand& b,
                            const BlockScaledGemmOptions& options, std::span<float> out) {
  const BlockScaledPath path = check_call(a, b, options, out);
  std::vector<std::uint8_t> left(out.size(), 0);
  if (!gemm_detail::block_scaled_lanes(a, b, path, options.c, options.threads, out, left)) return;
  // The outputs the lanes leave to the reference: a step with a NaN or infinite term, or an
  // overflow to Inf.
  const PreparedOperand pa = prepare(a);
  const PreparedOperand pb = prepare(b);
  const std::int64_t n = b.outer;
  for (std::size_t at = 0; at < left.size(); ++at) {
    if (left[at] == 0) continue;
    const auto i = static_cast<std::int64_t>(at) / n, j = static_cast<std::int64_t>(at) % n;
    out[at] =
        reference_output(pa, pb, path, a.block, i, j, options.c.empty() ? 0.0f : options.c[at]);
  }
}

std::vector<float> block_scaled_gemm(const BlockScaledOperand& a, const BlockScaledOperand& b,
                                     const BlockScaledGemmOptions& options) {
  std::vector<float> out(
      static_cast<std::size_t>(checked_element_count("block_scaled_gemm", a.outer, b.outer)));
  block_scaled_gemm_into(a, b, options, out);
  return out;
}

}  // namespace fp8lab::sim
