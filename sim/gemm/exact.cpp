// The kExact model (gemm.hpp): each K-block's sum of FP8 products computed exactly in integers.
//
// An FP8 value is sig * 2^exp with an integer significand (|sig| <= 15) and exp >= -16 (the E5M2
// subnormal grid; E4M3's is 2^-9), so a product is an integer multiple of 2^-32 below 2^32 and
// sig_a * sig_b << (exp_a + exp_b + 32) is exact in __int128 with room for 2^37 terms.
#include <array>
#include <cmath>
#include <stdexcept>

#include "sim/cast.hpp"
#include "sim/gemm/plan.hpp"
#include "sim/parallel.hpp"

namespace fp8lab::sim {

namespace {

constexpr int kProductUnitExponent = -32;  // products are multiples of 2^-32
__extension__ typedef __int128 Int128;  // GCC/Clang extension; __extension__ keeps -Wpedantic quiet

struct Fp8Parts {
  int sig = 0;           // signed integer significand
  int exp = 0;           // value = sig * 2^exp
  bool special = false;  // NaN or Inf
};

std::array<Fp8Parts, 256> parts_table(Format format) {
  const FormatSpec& f = spec(format);
  std::array<Fp8Parts, 256> table{};
  for (std::uint32_t code = 0; code < 256; ++code) {
    if (!std::isfinite(decode_element(static_cast<std::uint8_t>(code), format))) {
      table[code].special = true;
      continue;
    }
    const std::uint32_t magnitude = code & ~f.sign_mask() & 0xFFu;
    const int field = static_cast<int>(magnitude >> f.mantissa_bits);
    const int mantissa = static_cast<int>(magnitude & f.mantissa_mask());
    const int sig = field == 0 ? mantissa : (1 << f.mantissa_bits) | mantissa;
    table[code].sig = (code & f.sign_mask()) ? -sig : sig;
    table[code].exp = std::max(field, 1) - f.bias - f.mantissa_bits;
  }
  return table;
}

struct OperandView {
  const QuantizedTensor& t;
  bool k_is_cols;
  std::uint8_t code(std::int64_t o, std::int64_t k) const {
    return k_is_cols ? t.code_at(o, k) : t.code_at(k, o);
  }
  float scale(std::int64_t o, std::int64_t k) const {
    return k_is_cols ? t.scale_inv_at(o, k) : t.scale_inv_at(k, o);
  }
};

}  // namespace

std::vector<double> gemm_exact(const GemmOperand& a, const GemmOperand& b,
                               std::span<const float> bias, int threads) {
  gemm_detail::check_threads(threads);
  const GemmShape shape = gemm_shape(a, b);
  if (!bias.empty() && static_cast<std::int64_t>(bias.size()) != shape.n) {
    throw std::invalid_argument("GEMM bias has " + std::to_string(bias.size()) +
                                " values, expected N = " + std::to_string(shape.n));
  }
  // pad_inner_dim would add only zero products, so the exact model never pads.
  const std::vector<std::int64_t> starts = gemm_detail::k_block_starts(a, b, shape.k, shape.k);
  const OperandView av{a.tensor, a.k_dim == ReduceDim::kCols};
  const OperandView bv{b.tensor, b.k_dim == ReduceDim::kCols};
  const auto a_parts = parts_table(a.tensor.format);
  const auto b_parts = parts_table(b.tensor.format);
  const auto a_values = [&](std::uint8_t c) { return decode_element(c, a.tensor.format); };
  const auto b_values = [&](std::uint8_t c) { return decode_element(c, b.tensor.format); };
  const std::size_t blocks = starts.size() - 1;

  std::vector<double> out(static_cast<std::size_t>(shape.m * shape.n));
  parallel_units(shape.m, threads, [&](std::int64_t m) {
    for (std::int64_t n = 0; n < shape.n; ++n) {
      double total = 0.0;
      for (std::size_t j = 0; j < blocks; ++j) {
        const std::int64_t k0 = starts[j], k1 = starts[j + 1];
        Int128 sum = 0;
        bool special = false;
        for (std::int64_t k = k0; k < k1; ++k) {
          const Fp8Parts& pa = a_parts[av.code(m, k)];
          const Fp8Parts& pb = b_parts[bv.code(n, k)];
          special = special || pa.special || pb.special;
          const Int128 product = static_cast<Int128>(pa.sig * pb.sig);
          sum += product << (pa.exp + pb.exp - kProductUnitExponent);
        }
        double partial = std::ldexp(static_cast<double>(sum), kProductUnitExponent);
        if (special) {
          partial = 0.0;
          for (std::int64_t k = k0; k < k1; ++k) {
            partial += static_cast<double>(a_values(av.code(m, k))) *
                       static_cast<double>(b_values(bv.code(n, k)));
          }
        }
        const double scale = static_cast<double>(av.scale(m, k0)) *
                             static_cast<double>(bv.scale(n, k0));
        total = j == 0 ? partial * scale : total + partial * scale;
      }
      if (!bias.empty()) total += static_cast<double>(bias[static_cast<std::size_t>(n)]);
      out[static_cast<std::size_t>(m * shape.n + n)] = total;
    }
  });
  return out;
}

}  // namespace fp8lab::sim
