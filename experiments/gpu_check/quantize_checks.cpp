// gpu::quantize*, gpu::quantize_transpose, gpu::scaling::delayed_update and the device casts
// against sim/ (experiments/gpu_check/checks.hpp).
// Needs CUDA: compiled to nothing in a build without gpu/ (fp8lab_gpu_check globs every .cpp in gpu_check/).
#if FP8LAB_HAVE_CUDA
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "experiments/gpu_check/checks.hpp"
#include "experiments/gpu_check/compare_stats.hpp"
#include "gpu/cast_api.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/quantize.hpp"
#include "gpu/scaling/delayed.hpp"
#include "sim/quantize.hpp"
#include "sim/rng.hpp"
#include "sim/scaling/delayed.hpp"

namespace fp8lab::experiments::gpu_check {
namespace {

using sim::Format;
using sim::Overflow;

// Random magnitudes over 2^-40 .. 2^40 with 1 in 16 elements taken from the traps: NaN, ±Inf,
// ±0, fp32 denormals, both formats' max and overflow ties and their neighbours, subnormal ties.
std::vector<float> mixed(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> traps = {0.0f,
                              -0.0f,
                              inf,
                              -inf,
                              std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::denorm_min(),
                              std::numeric_limits<float>::max()};
  for (const float t : {448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 0.001953125f, 0.0009765625f}) {
    traps.push_back(t);
    traps.push_back(-std::nextafter(t, inf));
    traps.push_back(std::nextafter(t, 0.0f));
  }
  std::vector<float> x(n);
  for (auto& v : x) {
    v = rng() % 16 == 0 ? traps[rng() % traps.size()]
                        : std::ldexp(1.0f + static_cast<float>(rng() % 4096) / 4096.0f,
                                     static_cast<int>(rng() % 81) - 40) *
                              ((rng() & 1) != 0 ? -1.0f : 1.0f);
  }
  return x;
}

void compare_codes(CheckResult& r, const std::string& where, const std::vector<float>& x,
                   const std::vector<std::uint8_t>& expected,
                   const std::vector<std::uint8_t>& actual) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ++r.compared;
    if (expected[i] != 0) ++r.nonzero;
    if (expected[i] != actual[i]) {
      char text[128];
      std::snprintf(text, sizeof text, " code[%zu]: x = %s, sim 0x%02X, gpu 0x%02X", i,
                    bits_text(x[i]).c_str(), expected[i], actual[i]);
      r.add_mismatch(where + text,
                     static_cast<std::uint64_t>(std::abs(int{expected[i]} - int{actual[i]})));
    }
  }
}

enum class Kind { kFp32, kBf16, kStochastic, kTranspose };

CheckResult check_kind(Kind kind, const char* name) {
  CheckResult r;
  r.kernel = name;
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},   {1, 7},      {3, 9},
                                                          {33, 65}, {257, 1031}, {1024, 1027}};
  std::uint64_t seed = 1;
  for (const auto& [rows, cols] : shapes) {
    const std::size_t n = static_cast<std::size_t>(rows * cols);
    const std::vector<float> x = mixed(n, seed++);
    std::vector<std::uint16_t> xb(n);
    std::vector<float> seen = x;  // what the kernel quantizes (bf16 inputs: their fp32 values)
    for (std::size_t i = 0; i < n; ++i) {
      xb[i] = sim::fp32_to_bf16(x[i]);
      if (kind == Kind::kBf16) seen[i] = sim::bf16_to_fp32(xb[i]);
    }
    for (const Format format : sim::kFp8Formats) {
      for (const Overflow mode : sim::kOverflowModes) {
        for (const float scale : {1.0f, 0.3f, 1024.0f}) {
          const gpu::StochasticStream random{0xC0FFEE, 3, 17};
          std::vector<std::uint8_t> expected(n);
          sim::QuantizeStats es;
          if (kind == Kind::kBf16) {
            es = sim::quantize_bf16(xb, scale, format, mode, expected);
          } else if (kind == Kind::kStochastic) {
            es = sim::quantize_stochastic(x, scale, format, mode, random.seed, random.stream,
                                          random.first_index, expected);
          } else {
            es = sim::quantize(x, scale, format, mode, expected);
          }
          gpu::DeviceBuffer<float> dx(x), dscale(std::vector<float>{scale}), dscale_inv(1);
          gpu::DeviceBuffer<std::uint16_t> dxb(xb);
          gpu::DeviceBuffer<std::uint8_t> dcodes(n), dcodes_t(n);
          gpu::DeviceBuffer<gpu::DeviceQuantizeStats> dstats(1);
          dstats.zero();
          gpu::QuantizeOutputs out{dcodes.get(), nullptr, dstats.get(), dscale_inv.get()};
          const auto count = static_cast<std::int64_t>(n);
          switch (kind) {
            case Kind::kFp32:
              gpu::quantize(dx.get(), count, dscale.get(), format, mode, out);
              break;
            case Kind::kBf16:
              gpu::quantize_bf16(dxb.get(), count, dscale.get(), format, mode, out);
              break;
            case Kind::kStochastic:
              gpu::quantize_stochastic(dx.get(), count, dscale.get(), format, mode, random, out);
              break;
            case Kind::kTranspose:
              gpu::quantize_transpose(dx.get(), rows, cols, dscale.get(), format, mode, out,
                                      dcodes_t.get());
              break;
          }
          FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
          ++r.cases;
          const std::string where = std::to_string(rows) + "x" + std::to_string(cols) + " " +
                                    sim::spec(format).name + " " + sim::to_string(mode) +
                                    " scale " + bits_text(scale);
          compare_codes(r, where, seen, expected, dcodes.download());
          if (kind == Kind::kTranspose) {
            std::vector<std::uint8_t> expected_t(n);
            std::vector<float> seen_t(n);  // inputs in the transposed order, for the messages
            for (std::int64_t i = 0; i < rows; ++i) {
              for (std::int64_t j = 0; j < cols; ++j) {
                expected_t[j * rows + i] = expected[i * cols + j];
                seen_t[j * rows + i] = seen[i * cols + j];
              }
            }
            compare_codes(r, where + " transposed", seen_t, expected_t, dcodes_t.download());
          }
          compare_stats(r, where, es, gpu::read_stats(dstats.get()));
          compare_float(r, where + " scale_inv", 1.0f / scale, dscale_inv.download()[0]);
        }
      }
    }
  }
  return r;
}

CheckResult check_delayed_update() {
  CheckResult r;
  r.kernel = "delayed_update (TE fused)";
  std::mt19937_64 rng(5);
  struct Group {
    std::int64_t slots, len;
    bool most_recent, reduced;
    float scaled_max;
    std::vector<float> h, s, red;
    gpu::DeviceBuffer<float> dh, ds, dred;
  };
  std::vector<Group> groups;
  for (int copy = 0; copy < 20; ++copy) {
    const std::int64_t slots = 1 + copy % 3, len = copy % 4 == 0 ? 1024 : 1 + copy * 7;
    Group g{slots,
            len,
            copy % 5 == 1,
            copy % 2 == 1,
            sim::scaling::delayed_scaled_max(copy % 2 == 0 ? 448.0f : 57344.0f, copy % 3),
            std::vector<float>(static_cast<std::size_t>(slots * len), 0.0f),
            std::vector<float>(static_cast<std::size_t>(slots), 1.0f),
            std::vector<float>(static_cast<std::size_t>(slots), 0.0f),
            {},
            {},
            {}};
    g.dh = gpu::DeviceBuffer<float>(g.h);
    g.ds = gpu::DeviceBuffer<float>(g.s);
    g.dred = gpu::DeviceBuffer<float>(g.red);
    groups.push_back(std::move(g));
  }
  const float specials[] = {0.0f, std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min()};
  for (int step = 0; step < 10; ++step) {
    std::vector<gpu::scaling::DelayedUpdateGroup> device_groups;
    for (Group& g : groups) {
      for (std::int64_t j = 0; j < g.slots; ++j) {
        const auto pick = [&] {
          return rng() % 4 == 0 ? specials[rng() % 4]
                                : std::ldexp(1.0f + static_cast<float>(rng() % 100) / 100.0f,
                                             static_cast<int>(rng() % 30) - 15);
        };
        g.h[static_cast<std::size_t>(j)] = pick();
        g.red[static_cast<std::size_t>(j)] = rng() % 2 == 0 ? 0.0f : pick();
      }
      g.dh.upload(g.h);
      g.dred.upload(g.red);
      const bool recompute = step % 4 != 3;
      sim::scaling::fused_amax_and_scale_update(
          g.h, g.len, g.s, g.reduced ? std::span<const float>(g.red) : std::span<const float>(),
          g.most_recent ? sim::scaling::AmaxComputeAlgo::kMostRecent
                        : sim::scaling::AmaxComputeAlgo::kMax,
          g.scaled_max, recompute);
      device_groups.push_back({g.dh.get(), g.ds.get(), g.reduced ? g.dred.get() : nullptr, g.slots,
                               g.len, g.scaled_max, g.most_recent, recompute});
    }
    gpu::scaling::delayed_update(device_groups);
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    ++r.cases;
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const std::vector<float> h = groups[k].dh.download(), s = groups[k].ds.download();
      const std::string where = "step " + std::to_string(step) + " group " + std::to_string(k);
      for (std::size_t i = 0; i < h.size(); ++i)
        compare_float(r, where + " H[" + std::to_string(i) + "]", groups[k].h[i], h[i]);
      for (std::size_t j = 0; j < s.size(); ++j)
        compare_float(r, where + " S[" + std::to_string(j) + "]", groups[k].s[j], s[j]);
    }
  }
  return r;
}

}  // namespace

std::vector<CheckResult> check_quantize_kernels() {
  return {check_kind(Kind::kFp32, "quantize fp32"), check_kind(Kind::kBf16, "quantize bf16"),
          check_kind(Kind::kStochastic, "quantize stochastic"),
          check_kind(Kind::kTranspose, "quantize_transpose"), check_delayed_update()};
}

std::vector<CheckResult> check_casts_all_inputs(bool stochastic, bool every_mode) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 30;
  constexpr std::uint64_t kSeed = 0x5EED'CA57ull;
  std::vector<CheckResult> results;
  gpu::DeviceBuffer<std::uint8_t> codes(kChunk);
  std::vector<std::uint8_t> host(kChunk);
  for (const Format format : sim::kFp8Formats) {
    for (const Overflow mode : sim::kOverflowModes) {
      if (!every_mode && mode != Overflow::kSatFinite) continue;
      CheckResult r;
      r.kernel = std::string("cast ") + (stochastic ? "stochastic " : "rne ") +
                 sim::spec(format).name + " " + sim::to_string(mode) + " (all 2^32)";
      for (std::int64_t first = 0; first < (std::int64_t{1} << 32); first += kChunk) {
        gpu::cast_range(static_cast<std::uint32_t>(first), kChunk, format, mode, stochastic, kSeed,
                        codes.get());
        FP8LAB_CUDA_CHECK(cudaMemcpy(host.data(), codes.get(), kChunk, cudaMemcpyDeviceToHost));
        CheckResult part;
        parallel_chunks(
            kChunk,
            [&](std::int64_t lo, std::int64_t hi, CheckResult& local) {
              for (std::int64_t i = lo; i < hi; ++i) {
                const auto bits = static_cast<std::uint32_t>(first + i);
                const float y = std::bit_cast<float>(bits);
                const std::uint8_t expected =
                    stochastic ? sim::cast_fp32_to_fp8_stochastic(
                                     y, format, mode, sim::philox_block_word(kSeed, 0, bits))
                               : sim::cast_fp32_to_fp8(y, format, mode);
                ++local.compared;
                if (expected != 0) ++local.nonzero;
                if (expected != host[static_cast<std::size_t>(i)]) {
                  char text[96];
                  std::snprintf(text, sizeof text, "x = %s: sim 0x%02X, gpu 0x%02X",
                                bits_text(y).c_str(), expected, host[static_cast<std::size_t>(i)]);
                  local.add_mismatch(
                      text, static_cast<std::uint64_t>(
                                std::abs(int{expected} - int{host[static_cast<std::size_t>(i)]})));
                }
              }
            },
            part);
        r.merge(part);
      }
      r.cases = 1;
      results.push_back(std::move(r));
    }
  }
  return results;
}

}  // namespace fp8lab::experiments::gpu_check

#endif  // FP8LAB_HAVE_CUDA
