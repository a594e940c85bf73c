// gpu::quantize, quantize_bf16, quantize_stochastic against sim::quantize* (docs/numerics.md §4): every
// code and every statistic, on mixed random/adversarial tensors of awkward sizes, at aligned and
// misaligned addresses, in both formats and every overflow mode.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/quantize.hpp"
#include "sim/quantize.hpp"
#include "tests/gpu/describe.hpp"
#include "tests/gpu/inputs.hpp"
#include "tests/support/exhaustive.hpp"

using namespace fp8lab;
using sim::Format;
using sim::Overflow;

namespace {

// Sizes around the kernel's 16-byte loads (4 fp32 or 8 bf16 values), its warp chunks (512 fp32,
// 1024 bf16 values) and its grid, 0 and 1 included.
constexpr std::size_t kSizes[] = {
    0, 1, 7, 8, 9, 31, 511, 512, 513, 1000, 1025, 4099, (1u << 20) + 5};
// In-range tensors (the kernels' fast path): sizes around a chunk and a few chunks plus a tail.
constexpr std::size_t kInRangeSizes[] = {5, 511, 512, 513, 1024, 1025, 2051, 16384 + 515};
// Offsets in elements of x and of out from their allocations: aligned; misalignments that no
// scalar head can fix (the whole call runs one element at a time); and misalignments a head
// fixes (fp32: 3 or 1 elements, bf16: 7 or 5; then whole chunks, then the tail).
constexpr std::size_t kOffsets[][2] = {{0, 0}, {1, 0}, {0, 3}, {3, 5}, {1, 1}, {3, 3}};
const float kScales[] = {1.0f, 0.5f, 1.0f / 1024.0f, 3.0f, 448.0f / 3.1f, 65536.0f};

struct Case {
  std::string name;
  Format format;
  Overflow mode;
  float scale;
};

// Compares codes and statistics, printing the first mismatches with bits and values.
void compare(const Case& c, const std::vector<float>& x, const std::vector<std::uint8_t>& expected,
             const std::vector<std::uint8_t>& actual, const sim::QuantizeStats& es,
             const gpu::DeviceQuantizeStats& as) {
  testing::MismatchLog log;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i])
      log.add(testing::code_mismatch("code", i, x[i], expected[i], actual[i], c.format));
  }
  INFO(c.name << " " << sim::spec(c.format).name << " " << sim::to_string(c.mode) << " scale "
              << testing::float_text(c.scale) << " n " << x.size() << ": " << log.report());
  CHECK(log.count == 0);
  INFO("amax sim " << testing::float_text(es.amax) << " gpu " << testing::float_text(as.amax));
  CHECK(testing::same_bits(es.amax, as.amax));
  CHECK(es.count == as.count);
  CHECK(es.saturated == as.saturated);
  CHECK(es.underflowed == as.underflowed);
  CHECK(es.nan == as.nan);
}

enum class Kind { kFp32, kBf16, kStochastic };

void run_case(Kind kind, const Case& c, const std::vector<float>& x, std::size_t x_offset,
              std::size_t out_offset) {
  const std::size_t n = x.size();
  std::vector<std::uint8_t> expected(n);
  sim::QuantizeStats es;
  const std::vector<std::uint16_t> xb = testing::to_bf16_bits(x);
  // First index 1001: the groups of x_offset 0 start one word into a Philox block; x_offset 1's
  // head of 3 brings them to a block's start.
  const gpu::StochasticStream random{0x1234'5678'9ABCull, 77, 1001};
  switch (kind) {
    case Kind::kFp32: es = sim::quantize(x, c.scale, c.format, c.mode, expected); break;
    case Kind::kBf16: es = sim::quantize_bf16(xb, c.scale, c.format, c.mode, expected); break;
    case Kind::kStochastic:
      es = sim::quantize_stochastic(x, c.scale, c.format, c.mode, random.seed, random.stream,
                                    random.first_index, expected);
      break;
  }
  gpu::DeviceBuffer<float> dx(n + x_offset);
  gpu::DeviceBuffer<std::uint16_t> dxb(n + x_offset);
  gpu::DeviceBuffer<std::uint8_t> dout(n + out_offset);
  gpu::DeviceBuffer<float> dscale(std::vector<float>{c.scale});
  gpu::DeviceBuffer<gpu::DeviceQuantizeStats> dstats(1);
  gpu::DeviceBuffer<float> damax(1);
  dstats.zero();
  damax.zero();
  if (n > 0) {  // (a zero-byte copy may still reject a null pointer)
    FP8LAB_CUDA_CHECK(
        cudaMemcpy(dx.get() + x_offset, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemcpy(dxb.get() + x_offset, xb.data(), n * 2, cudaMemcpyHostToDevice));
  }
  const gpu::QuantizeOutputs out{dout.get() + out_offset, damax.get(), dstats.get()};
  switch (kind) {
    case Kind::kFp32:
      gpu::quantize(dx.get() + x_offset, static_cast<std::int64_t>(n), dscale.get(), c.format,
                    c.mode, out);
      break;
    case Kind::kBf16:
      gpu::quantize_bf16(dxb.get() + x_offset, static_cast<std::int64_t>(n), dscale.get(), c.format,
                         c.mode, out);
      break;
    case Kind::kStochastic:
      gpu::quantize_stochastic(dx.get() + x_offset, static_cast<std::int64_t>(n), dscale.get(),
                               c.format, c.mode, random, out);
      break;
  }
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> actual(n);
  if (n > 0)
    FP8LAB_CUDA_CHECK(
        cudaMemcpy(actual.data(), dout.get() + out_offset, n, cudaMemcpyDeviceToHost));
  // bf16 inputs are compared as the values the kernel saw.
  std::vector<float> shown = x;
  if (kind == Kind::kBf16)
    for (std::size_t i = 0; i < n; ++i) shown[i] = sim::bf16_to_fp32(xb[i]);
  compare(c, shown, expected, actual, es, gpu::read_stats(dstats.get()));
  const float amax = damax.download()[0];
  INFO("amax output: sim " << testing::float_text(es.amax) << " gpu " << testing::float_text(amax));
  CHECK(testing::same_bits(es.amax, amax));
}

// Values whose groups mostly take the kernels' fast path (no NaN, no overflow at scales up to
// 448 / 3.1): magnitudes 2^-30 .. 2^4 (E4M3 and E5M2 subnormals and underflows included), zeros
// of both signs and fp32 denormals; one value in 2048 is NaN, ±Inf or huge, so that a warp mixes
// fast and per-element groups.
std::vector<float> in_range_tensor(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> exponent(-30, 4);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  const float rare[] = {std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), 1e30f, -70000.0f};
  std::vector<float> x(n);
  for (auto& v : x) {
    const std::uint64_t r = rng();
    const float sign = (r & 1) != 0 ? -1.0f : 1.0f;
    if (r % 2048 == 1) {
      v = rare[(r >> 12) % std::size(rare)];
    } else if (r % 32 == 2) {
      v = sign * 0.0f;
    } else if (r % 64 == 4) {
      v = sign * std::numeric_limits<float>::denorm_min() *
          static_cast<float>((r >> 20) % 1000 + 1);
    } else {
      v = sign * std::ldexp(mantissa(rng), exponent(rng));
    }
  }
  return x;
}

void run_sizes(Kind kind, const char* name, bool in_range) {
  const std::uint64_t seed = testing::seed_from(name);
  for (const std::size_t n : in_range ? std::span<const std::size_t>(kInRangeSizes)
                                      : std::span<const std::size_t>(kSizes)) {
    const std::vector<float> x = in_range ? in_range_tensor(n, seed + n)
                                          : testing::mixed_tensor(n, seed + n);
    for (const Format format : sim::kFp8Formats) {
      for (const Overflow mode : sim::kOverflowModes) {
        for (const float scale : kScales) {
          // Misaligned offsets only for one scale per size: they test addressing, not numerics.
          const std::size_t offsets = scale == kScales[0] ? std::size(kOffsets) : 1;
          for (std::size_t o = 0; o < offsets; ++o) {
            run_case(kind, {name, format, mode, scale}, x, kOffsets[o][0], kOffsets[o][1]);
          }
        }
      }
    }
  }
}

void run_all(Kind kind, const char* name) {
  run_sizes(kind, name, false);
  run_sizes(kind, name, true);
}

}  // namespace

TEST_CASE("gpu::quantize (fp32) equals sim::quantize: codes, amax, statistics") {
  run_all(Kind::kFp32, "gpu::quantize");
}

TEST_CASE("gpu::quantize_bf16 equals sim::quantize_bf16") {
  run_all(Kind::kBf16, "gpu::quantize_bf16");
}

TEST_CASE("gpu::quantize_stochastic equals sim::quantize_stochastic (same Philox words)") {
  run_all(Kind::kStochastic, "gpu::quantize_stochastic");
}

TEST_CASE("gpu::quantize on tensors larger than one grid pass (each warp takes several steps)") {
  // The grid holds what fits on the device at once (an H200: about 5400 warps of 512 fp32 values
  // for RNE, 2100 for stochastic), so only a tensor of several million values makes each warp loop,
  // and the stochastic kernel use the step it loaded ahead.
  const std::size_t n = (std::size_t{1} << 23) + 517;
  const std::vector<float> x = in_range_tensor(n, testing::seed_from("large"));
  for (const Kind kind : {Kind::kFp32, Kind::kBf16, Kind::kStochastic}) {
    for (const auto& offsets :
         {std::array<std::size_t, 2>{0, 0}, std::array<std::size_t, 2>{1, 1}}) {
      run_case(kind, {"large", Format::E4M3, Overflow::kSatFinite, 1.0f}, x, offsets[0],
               offsets[1]);
    }
  }
}

TEST_CASE("gpu::quantize in-range tensors mostly take the fast path, and not only") {
  // Counted as the fast path's condition (gpu/quantize_common.cuh, rn_in_range) over groups of 4
  // at scale 1 in E4M3: most groups in range, some not, and underflows and zeros among them.
  const std::vector<float> x = in_range_tensor(1u << 16, 11);
  std::size_t in_range_groups = 0;
  for (std::size_t g = 0; g + 4 <= x.size(); g += 4) {
    bool ok = true;
    for (std::size_t k = g; k < g + 4; ++k) ok = ok && std::fabs(x[k]) <= 464.0f;  // false for NaN
    in_range_groups += ok ? 1 : 0;
  }
  CHECK(in_range_groups > x.size() / 4 * 9 / 10);
  CHECK(in_range_groups < x.size() / 4);
  std::vector<std::uint8_t> codes(x.size());
  const sim::QuantizeStats s = sim::quantize(x, 1.0f, Format::E4M3, Overflow::kSatFinite, codes);
  CHECK(s.underflowed > 0);
  CHECK(s.nan > 0);
}

TEST_CASE("gpu::quantize statistics cannot pass vacuously") {
  // The mixed tensor must exercise every counter, else the comparisons above prove little.
  const std::vector<float> x = testing::mixed_tensor(1u << 16, 7);
  std::vector<std::uint8_t> codes(x.size());
  const sim::QuantizeStats s = sim::quantize(x, 1.0f, Format::E4M3, Overflow::kNoSat, codes);
  CHECK(s.saturated > 0);
  CHECK(s.underflowed > 0);
  CHECK(s.nan > s.saturated);
  CHECK(std::isinf(s.amax));
}
