// Helpers shared by the GEMM tests: operands built directly from codes and scales (no quantizer),
// scaling kinds described along K, a bit-for-bit comparison that prints and dumps failures.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <hwy/targets.h>
#include <catch2/catch.hpp>

#include "sim/cast.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::testing {

using sim::Format;
using sim::QuantizedTensor;
using sim::ReduceDim;

// A scaling kind as scale-block extents along the GEMM's K and along the operand's other dim;
// 0 means "the whole dimension" (per-tensor, rowwise).
struct ScalingKind {
  const char* name;
  std::int64_t along_k;
  std::int64_t along_outer;
};
inline constexpr ScalingKind kPerTensor{"per-tensor", 0, 0};
inline constexpr ScalingKind kRowwise{"rowwise", 0, 1};
inline constexpr ScalingKind kBlock1x128{"1x128", 128, 1};
inline constexpr ScalingKind kBlock128x128{"128x128", 128, 128};
inline constexpr ScalingKind kMx1x32{"mx-1x32", 32, 1};
inline constexpr ScalingKind kMx32x32{"mx-32x32", 32, 32};

// Codes that decode to finite values.
inline std::vector<std::uint8_t> finite_codes(Format format) {
  std::vector<std::uint8_t> codes;
  for (int c = 0; c < 256; ++c) {
    if (std::isfinite(sim::decode_fp8(static_cast<std::uint8_t>(c), format))) {
      codes.push_back(static_cast<std::uint8_t>(c));
    }
  }
  return codes;
}

// An operand with `outer` x `k` logical elements stored as [outer, K] (k_dim = kCols) or [K, outer]
// (k_dim = kRows), random finite codes and random positive scales (powers of two when pow2, else
// any fp32 in [2^-4, 2^4)).
inline QuantizedTensor random_operand(std::mt19937& rng, std::int64_t outer, std::int64_t k,
                                      ReduceDim k_dim, Format format, ScalingKind kind,
                                      bool pow2_scales) {
  QuantizedTensor t;
  t.format = format;
  const bool k_is_cols = k_dim == ReduceDim::kCols;
  t.rows = k_is_cols ? outer : k;
  t.cols = k_is_cols ? k : outer;
  const std::int64_t block_k = kind.along_k == 0 ? k : kind.along_k;
  const std::int64_t block_outer = kind.along_outer == 0 ? outer : kind.along_outer;
  t.block_rows = std::max<std::int64_t>(1, k_is_cols ? block_outer : block_k);
  t.block_cols = std::max<std::int64_t>(1, k_is_cols ? block_k : block_outer);
  const auto codes = finite_codes(format);
  std::uniform_int_distribution<std::size_t> pick(0, codes.size() - 1);
  t.data.resize(static_cast<std::size_t>(t.rows * t.cols));
  for (auto& c : t.data) c = codes[pick(rng)];
  std::uniform_int_distribution<int> exponent(-4, 3);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  t.scale_inv.resize(static_cast<std::size_t>(t.scale_rows() * t.scale_cols()));
  for (auto& s : t.scale_inv) {
    s = std::ldexp(pow2_scales ? 1.0f : mantissa(rng), exponent(rng));
  }
  return t;
}

// One scale for the whole tensor.
inline QuantizedTensor per_tensor(std::int64_t rows, std::int64_t cols, Format format,
                                  std::vector<std::uint8_t> codes, float scale_inv = 1.0f) {
  QuantizedTensor t;
  t.rows = rows;
  t.cols = cols;
  t.format = format;
  t.data = std::move(codes);
  t.block_rows = std::max<std::int64_t>(rows, 1);
  t.block_cols = std::max<std::int64_t>(cols, 1);
  t.scale_inv = {scale_inv};
  return t;
}

// The code of an exactly representable value (checked).
inline std::uint8_t code_of(float value, Format format) {
  const std::uint8_t code = sim::cast_fp32_to_fp8(value, format, sim::Overflow::kNoSat);
  REQUIRE(sim::decode_fp8(code, format) == value);
  return code;
}

inline std::string describe(float v) {
  std::ostringstream s;
  s << std::hexfloat << v << " (0x" << std::hex << std::bit_cast<std::uint32_t>(v) << ")";
  return s.str();
}

inline void dump_tensor(std::ostream& out, const char* name, const QuantizedTensor& t) {
  out << name << ": " << sim::spec(t.format).name << " [" << t.rows << ", " << t.cols << "] blocks "
      << t.block_rows << "x" << t.block_cols << "\n  codes:";
  for (auto c : t.data) out << ' ' << static_cast<int>(c);
  out << "\n  scale_inv:";
  for (auto s : t.scale_inv) out << ' ' << std::hexfloat << s;
  out << "\n";
}

// Compares bit patterns; on mismatch prints the first ones (row, col, bits and values) and writes
// the operands and both outputs to gemm_failure_<label>.txt in the working directory.
inline void require_same_bits(const std::vector<float>& expected, const std::vector<float>& actual,
                              std::int64_t n, const std::string& label,
                              const QuantizedTensor* a = nullptr,
                              const QuantizedTensor* b = nullptr) {
  REQUIRE(expected.size() == actual.size());
  std::size_t mismatches = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(expected[i]) != std::bit_cast<std::uint32_t>(actual[i])) {
      if (mismatches < 8) {
        first << "\n  [" << static_cast<std::int64_t>(i) / n << ", "
              << static_cast<std::int64_t>(i) % n << "] expected " << describe(expected[i])
              << " got " << describe(actual[i]);
      }
      ++mismatches;
    }
  }
  if (mismatches != 0) {
    std::string file = "gemm_failure_" + label + ".txt";
    for (auto& ch : file) {
      if (ch == ' ' || ch == '/' || ch == ',') ch = '_';
    }
    std::ofstream dump(file);
    dump << label << "\n";
    if (a) dump_tensor(dump, "A", *a);
    if (b) dump_tensor(dump, "B", *b);
    dump << "expected:";
    for (float v : expected) dump << ' ' << std::hexfloat << v;
    dump << "\nactual:";
    for (float v : actual) dump << ' ' << std::hexfloat << v;
    dump << "\n";
    FAIL(label << ": " << mismatches << " of " << expected.size() << " outputs differ (dumped to "
               << file << ")" << first.str());
  }
}

// Runs body(target name) once per SIMD target this CPU supports and the library was built for
// (AVX-512, AVX2, SSE4, ...), with the GEMM kernels' runtime dispatch forced to that target:
// one test body for every backend (STYLE.md §9).
template <typename Body>
void for_each_simd_target(Body body) {
  struct Restore {
    ~Restore() { hwy::SetSupportedTargetsForTest(0); }
  } restore;
  for (std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    body(std::string(hwy::TargetName(target)));
  }
}

// body(threads, "<target> threads <n>") for every SIMD target at 1, 2 and 3 threads: a GEMM's bits
// depend on neither, and the label names both in a failure.
template <typename Body>
void for_each_target_and_threads(Body body) {
  for_each_simd_target([&](const std::string& target) {
    for (int threads : {1, 2, 3}) body(threads, target + " threads " + std::to_string(threads));
  });
}

// Guard: a comparison of two all-zero outputs proves nothing.
inline std::size_t count_nonzero(const std::vector<float>& v) {
  std::size_t nonzero = 0;
  for (float x : v) nonzero += x != 0.0f ? 1 : 0;
  return nonzero;
}

}  // namespace fp8lab::testing
