// The worker pool behind sim's threads (sim/parallel.hpp): every unit runs exactly once
// for any thread count, repeated and concurrent jobs work, and an exception reaches the caller.
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/parallel.hpp"

namespace fp8lab::testing {
namespace {

using sim::parallel_units;

TEST_CASE("parallel_units runs every unit exactly once") {
  for (int threads : {1, 2, 3, 8}) {
    for (std::int64_t count : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
      for (int repeat = 0; repeat < 3; ++repeat) {
        parallel_units(count, threads,
                       [&](std::int64_t u) { ++runs[static_cast<std::size_t>(u)]; });
      }
      for (const auto& r : runs) REQUIRE(r.load() == 3);
    }
  }
}

TEST_CASE("parallel_units runs units on two threads at once") {
  // Each of the two units waits (up to 20 s) until both are inside the body: only possible when
  // a pool worker runs one while the caller runs the other.
  std::atomic<int> inside{0};
  std::atomic<int> met{0};
  parallel_units(2, 2, [&](std::int64_t) {
    ++inside;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (inside.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    if (inside.load() == 2) ++met;
  });
  REQUIRE(met.load() == 2);
}

TEST_CASE("parallel_units serves concurrent callers") {
  std::atomic<std::int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int job = 0; job < 20; ++job) {
        parallel_units(100, 2, [&](std::int64_t u) { sum += u; });
      }
    });
  }
  for (auto& t : callers) t.join();
  REQUIRE(sum.load() == 4 * 20 * (99 * 100 / 2));
}

TEST_CASE("parallel_units rethrows a unit's exception after all threads left the body") {
  REQUIRE_THROWS_WITH(parallel_units(1000, 3,
                                     [&](std::int64_t u) {
                                       if (u == 5) throw std::runtime_error("unit 5 failed");
                                     }),
                      "unit 5 failed");
  // The pool is usable afterwards.
  std::atomic<int> count{0};
  parallel_units(50, 3, [&](std::int64_t) { ++count; });
  REQUIRE(count.load() == 50);
}

}  // namespace
}  // namespace fp8lab::testing
