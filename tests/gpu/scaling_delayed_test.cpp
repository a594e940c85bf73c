// gpu::scaling::delayed_update against sim::scaling::fused_amax_and_scale_update: several modules
// (groups) of different slot counts, history lengths, margins and algorithms updated in one call,
// over consecutive steps whose row-0 amaxes include 0 (unused slot), NaN, +Inf, tiny values (scale
// overflows to FLT_MAX) and ordinary values; with and without a reduced (all-reduced) row.
// Every history entry and every scale is compared bit for bit after every step.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/scaling/delayed.hpp"
#include "sim/scaling/delayed.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/gpu/inputs.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;

namespace {

struct Module {
  std::int64_t slots, len;
  int margin;
  bool most_recent, with_reduced;
  float fp8_max;
  std::vector<float> history, scale, reduced;  // host mirror driven through sim
  gpu::DeviceBuffer<float> d_history, d_scale, d_reduced;
};

float step_amax(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0: return 0.0f;  // slot unused: no roll
    case 1: return std::numeric_limits<float>::quiet_NaN();
    case 2: return std::numeric_limits<float>::infinity();
    case 3: return std::numeric_limits<float>::denorm_min();  // scale overflows: FLT_MAX
    default:
      return std::ldexp(1.0f + static_cast<float>(rng() % 1024) / 1024.0f,
                        static_cast<int>(rng() % 40) - 20);
  }
}

}  // namespace

TEST_CASE("gpu delayed_update equals sim fused_amax_and_scale_update over many steps") {
  std::mt19937_64 rng(testing::seed_from("delayed_update"));
  const struct {
    std::int64_t slots, len;
    int margin;
    bool most_recent, with_reduced;
    float fp8_max;
  } shapes[] = {{3, 1024, 0, false, false, 448.0f}, {2, 1, 0, false, false, 57344.0f},
                {3, 16, 2, true, false, 448.0f},    {2, 5, 1, false, true, 57344.0f},
                {1, 3000, 0, false, false, 448.0f}, {7, 300, 3, true, true, 448.0f}};
  std::vector<Module> modules;
  for (int copy = 0; copy < 10; ++copy) {  // 60 groups: more than one launch's worth
    for (const auto& s : shapes) {
      Module m{s.slots, s.len, s.margin, s.most_recent, s.with_reduced, s.fp8_max, {}, {}, {},
               {},      {},    {}};
      m.history.assign(static_cast<std::size_t>(s.len * s.slots), 0.0f);
      m.scale.assign(static_cast<std::size_t>(s.slots), 1.0f);
      m.reduced.assign(static_cast<std::size_t>(s.slots), 0.0f);
      m.d_history = gpu::DeviceBuffer<float>(m.history);
      m.d_scale = gpu::DeviceBuffer<float>(m.scale);
      m.d_reduced = gpu::DeviceBuffer<float>(m.reduced);
      modules.push_back(std::move(m));
    }
  }
  bool moved = false, flt_max = false;  // vacuity guard, over every step's sim scales
  for (int step = 0; step < 12; ++step) {
    std::vector<gpu::scaling::DelayedUpdateGroup> groups;
    for (Module& m : modules) {
      for (std::int64_t j = 0; j < m.slots; ++j) {  // this step's casts: row 0 (and R)
        m.history[static_cast<std::size_t>(j)] = step_amax(rng);
        m.reduced[static_cast<std::size_t>(j)] = (rng() % 2 == 0) ? 0.0f : step_amax(rng);
      }
      m.d_history.upload(m.history);
      m.d_reduced.upload(m.reduced);
      const float scaled_max = sim::scaling::delayed_scaled_max(m.fp8_max, m.margin);
      const bool recompute = step % 3 != 2;
      groups.push_back({m.d_history.get(), m.d_scale.get(),
                        m.with_reduced ? m.d_reduced.get() : nullptr, m.slots, m.len, scaled_max,
                        m.most_recent, recompute});
      sim::scaling::fused_amax_and_scale_update(
          m.history, m.len, m.scale,
          m.with_reduced ? std::span<const float>(m.reduced) : std::span<const float>(),
          m.most_recent ? sim::scaling::AmaxComputeAlgo::kMostRecent
                        : sim::scaling::AmaxComputeAlgo::kMax,
          scaled_max, recompute);
    }
    for (const Module& m : modules) {
      for (const float v : m.scale) {
        moved |= v != 1.0f;
        flt_max |= v == std::numeric_limits<float>::max();
      }
    }
    gpu::scaling::delayed_update(groups);
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    testing::MismatchLog log;
    for (std::size_t g = 0; g < modules.size(); ++g) {
      const Module& m = modules[g];
      const std::vector<float> h = m.d_history.download(), s = m.d_scale.download();
      for (std::size_t i = 0; i < h.size(); ++i) {
        if (!testing::same_bits(h[i], m.history[i])) {
          log.add("step " + std::to_string(step) + " group " + std::to_string(g) + " " +
                  testing::float_mismatch("H", i, m.history[i], h[i]));
        }
      }
      for (std::size_t j = 0; j < s.size(); ++j) {
        if (!testing::same_bits(s[j], m.scale[j])) {
          log.add("step " + std::to_string(step) + " group " + std::to_string(g) + " " +
                  testing::float_mismatch("S", j, m.scale[j], s[j]));
        }
      }
    }
    INFO(log.report());
    CHECK(log.count == 0);
  }
  // Guard against a vacuous pass: the scales must have moved away from 1.0 and hit FLT_MAX.
  CHECK(moved);
  CHECK(flt_max);
}

TEST_CASE("gpu delayed_update rejects bad groups with the field named") {
  gpu::scaling::DelayedUpdateGroup bad;
  CHECK_THROWS_WITH(gpu::scaling::delayed_update({bad}), Catch::Contains("groups[0].history"));
}
