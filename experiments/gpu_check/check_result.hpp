// The result of running one GPU kernel against its sim/ reference on a set of cases: what
// `fp8lab check` prints as a table row and what the gpu tests assert on (tests/gpu/ compile these
// checks into their programs, so the command and the tests run the same cases with one body).
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace fp8lab::experiments::gpu_check {

struct CheckResult {
  std::string kernel;            // e.g. "gemm fp32_seq mxfp8"
  std::uint64_t cases = 0;       // tensors / problems run
  std::uint64_t compared = 0;    // values compared (codes, scales, history entries, outputs)
  std::uint64_t nonzero = 0;     // compared reference values that are not zero (vacuity guard)
  std::uint64_t mismatches = 0;  // values whose bits differ
  std::uint64_t max_ulp = 0;     // largest distance in units in the last place among mismatches
  double sum_ulp = 0.0;          // for the mean distance over compared values
  // A peer (cuBLASLt, torch._scaled_mm) compared with a model: its distance is reported, never a
  // failure, because no model of it is claimed exact (docs/numerics.md §4).
  bool peer = false;
  std::vector<std::string> first;  // the first mismatches, described with bits and values
  // Mismatches by std::bit_width of their ULP distance: [0] 0 ulp (+0 vs -0, NaN payloads),
  // [1] 1 ulp, [2] 2-3, [k] 2^(k-1)..2^k-1, [32] up to UINT32_MAX (NaN against a number). The
  // ULP histogram of `fp8lab check --json` (notebooks/gpu_vs_reference.ipynb).
  std::array<std::uint64_t, 33> ulp_bit_width_counts{};

  static constexpr std::size_t kKeep = 6;

  void add_mismatch(std::string description, std::uint64_t ulp) {
    ++mismatches;
    const auto width = static_cast<std::size_t>(std::bit_width(ulp));
    ++ulp_bit_width_counts[width < 32 ? width : 32];
    if (ulp > max_ulp) max_ulp = ulp;
    sum_ulp += static_cast<double>(ulp);
    if (first.size() < kKeep) first.push_back(std::move(description));
  }
  void merge(const CheckResult& other) {
    cases += other.cases;
    compared += other.compared;
    nonzero += other.nonzero;
    mismatches += other.mismatches;
    if (other.max_ulp > max_ulp) max_ulp = other.max_ulp;
    sum_ulp += other.sum_ulp;
    for (std::size_t b = 0; b < ulp_bit_width_counts.size(); ++b) {
      ulp_bit_width_counts[b] += other.ulp_bit_width_counts[b];
    }
    for (const auto& line : other.first) {
      if (first.size() < kKeep) first.push_back(line);
    }
  }
  bool passed() const { return peer || (mismatches == 0 && compared > 0 && nonzero > 0); }
  double mean_ulp() const { return compared == 0 ? 0.0 : sum_ulp / static_cast<double>(compared); }
  std::string report() const {
    std::string text = kernel + ": " + std::to_string(cases) + " cases, " +
                       std::to_string(compared) + " values (" + std::to_string(nonzero) +
                       " nonzero), " + std::to_string(mismatches) + " mismatches, max ulp " +
                       std::to_string(max_ulp) + (peer ? " (peer: reported, not a failure)" : "");
    for (const auto& line : first) text += "\n  " + line;
    return text;
  }
};

// Distance between two floats in units in the last place (adjacent floats are 1 apart, +0 and -0
// are 0 apart); both NaN counts as equal, NaN against a number as the largest distance.
inline std::uint64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT32_MAX;
  auto key = [](float v) -> std::int64_t {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<std::uint32_t>(v));
    return bits >= 0x8000'0000 ? 0x8000'0000 - bits : bits;
  };
  const std::int64_t d = key(a) - key(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

inline std::string bits_text(float v) {
  char text[48];
  std::snprintf(text, sizeof text, "0x%08X (%.9g)", std::bit_cast<std::uint32_t>(v),
                static_cast<double>(v));
  return text;
}

// The names of the two sides in a mismatch line: sim against a gpu/ kernel, or a model against a
// peer library ("model", "cublaslt").
struct Sides {
  const char* expected = "sim";
  const char* actual = "gpu";
};

// Records one float comparison: bit equality is the contract (docs/numerics.md §4). `where()` names
// the value; it is called only for a mismatch, so loops over millions of values build no text.
template <typename Where>
void compare_float_at(CheckResult& r, Where where, float expected, float actual, Sides sides = {}) {
  ++r.compared;
  if (expected != 0.0f) ++r.nonzero;
  if (std::bit_cast<std::uint32_t>(expected) != std::bit_cast<std::uint32_t>(actual)) {
    r.add_mismatch(where() + ": " + sides.expected + " " + bits_text(expected) + ", " +
                       sides.actual + " " + bits_text(actual),
                   ulp_distance(expected, actual));
  }
}

inline void compare_float(CheckResult& r, const std::string& where, float expected, float actual) {
  compare_float_at(
      r, [&] { return where; }, expected, actual);
}

// Every element of a row-major matrix with `cols` columns; a mismatch names `where` C[row,col].
inline void compare_matrix(CheckResult& r, const std::string& where,
                           const std::vector<float>& expected, const float* actual,
                           std::int64_t cols, Sides sides = {}) {
  const auto n = static_cast<std::size_t>(cols);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    compare_float_at(
        r,
        [&] { return where + " C[" + std::to_string(i / n) + "," + std::to_string(i % n) + "]"; },
        expected[i], actual[i], sides);
  }
}

// Runs body(lo, hi, local_result) over [0, count) split across the host's cores and merges the
// per-thread results into `into` (for checks over billions of values).
template <typename Body>
void parallel_chunks(std::int64_t count, Body body, CheckResult& into) {
  const unsigned threads =
      std::thread::hardware_concurrency() > 0 ? std::thread::hardware_concurrency() : 1;
  std::vector<CheckResult> parts(threads);
  std::vector<std::thread> pool;
  const std::int64_t chunk = (count + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::int64_t lo = chunk * t, hi = lo + chunk < count ? lo + chunk : count;
    if (lo >= hi) break;
    pool.emplace_back([&, t, lo, hi] { body(lo, hi, parts[t]); });
  }
  for (auto& thread : pool) thread.join();
  for (const auto& part : parts) into.merge(part);
}

}  // namespace fp8lab::experiments::gpu_check
