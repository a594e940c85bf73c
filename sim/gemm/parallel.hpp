// Deterministic work splitting for sim/gemm/: units [0, count) are handed out to `threads`
// std::threads through an atomic counter. Each unit must write disjoint outputs, so results never
// depend on which thread ran which unit.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace fp8lab::sim::gemm_detail {

template <typename Body>
void parallel_units(std::int64_t count, int threads, Body body) {
  const std::int64_t workers = std::min<std::int64_t>(std::max(threads, 1), count);
  if (workers <= 1) {
    for (std::int64_t u = 0; u < count; ++u) body(u);
    return;
  }
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    for (std::int64_t u = next.fetch_add(1); u < count; u = next.fetch_add(1)) body(u);
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers - 1));
  for (std::int64_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
}

}  // namespace fp8lab::sim::gemm_detail
