// Runs a check over every 32-bit pattern (or any index range) on all cores and collects the first
// mismatches, so that exhaustive tests stay readable and report bits, not just a count; and the
// comparison of sim's casts with CUDA's host-side conversions on every fp32 pattern.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fp8lab::testing {

struct MismatchLog {
  std::atomic<std::uint64_t> count{0};
  std::mutex mutex;
  std::vector<std::string> first;  // at most kKeep descriptions
  static constexpr std::size_t kKeep = 8;

  void add(std::string description) {
    if (count.fetch_add(1) < kKeep) {
      std::lock_guard lock(mutex);
      first.push_back(std::move(description));
    }
  }
  std::string report() const {
    std::string text = std::to_string(count.load()) + " mismatches";
    for (const auto& line : first) text += "\n  " + line;
    return text;
  }
};

// Calls body(i) for every i in [begin, end), split into contiguous chunks over hardware threads.
template <typename Body>
void parallel_for_u64(std::uint64_t begin, std::uint64_t end, Body body) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t chunk = (end - begin + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const std::uint64_t lo = begin + t * chunk;
    const std::uint64_t hi = std::min(end, lo + chunk);
    if (lo >= hi) break;
    pool.emplace_back([lo, hi, &body] {
      for (std::uint64_t i = lo; i < hi; ++i) body(i);
    });
  }
  for (auto& thread : pool) thread.join();
}

// Logs every fp32 bit pattern x on which a CUDA oracle's code cuda(x) and sim's code sim(x)
// differ (integer codes: bytes, 16-bit words), as "x = 0x3F800000 (1): cuda 0x38, sim 0x39" with
// the codes in `digits` hex digits.
template <typename Cuda, typename Sim>
void log_cuda_mismatches_on_all_fp32(MismatchLog& log, int digits, Cuda cuda, Sim sim) {
  parallel_for_u64(0, 1ull << 32, [&](std::uint64_t i) {
    const auto bits = static_cast<std::uint32_t>(i);
    const float x = std::bit_cast<float>(bits);
    const unsigned expected = cuda(x), actual = sim(x);
    if (expected != actual) {
      char line[160];
      std::snprintf(line, sizeof line, "x = 0x%08X (%.9g): cuda 0x%0*X, sim 0x%0*X", bits,
                    static_cast<double>(x), digits, expected, digits, actual);
      log.add(line);
    }
  });
}

}  // namespace fp8lab::testing
