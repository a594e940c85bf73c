// gpu/quantize_host_twin.hpp: detail::quantize_rn_group and quantize_stochastic_group compiled
// for the host. On the host the
// satfinite conversion is cuda_fp8.h's software path (proven equal to sim on all 2^32 inputs by
// tests/sim/cast_cuda_oracle_test.cpp); everything else is the code the kernels run.
#include <cmath>
#include <stdexcept>
#include <string>

#include "gpu/quantize_common.cuh"
#include "gpu/quantize_host_twin.hpp"

namespace fp8lab::gpu::host_twin {
namespace {

// The values x[0, n) quantized group by group (4 values, packed into one word) into codes[0, n).
struct Groups {
  const float* x;
  std::int64_t n;
  float scale;
  std::uint8_t* codes;
  detail::Counters* c;

  // quantize_group(i, word) packs the codes of x[i, i + 4) into word[0]; unpacked into codes.
  template <typename QuantizeGroup>
  void each(QuantizeGroup quantize_group) const {
    for (std::int64_t i = 0; i < n; i += 4) {
      std::uint32_t word[1];
      quantize_group(i, word);
      for (int k = 0; k < 4; ++k) codes[i + k] = static_cast<std::uint8_t>(word[0] >> (8 * k));
    }
  }
};

struct RnGroups : Groups {
  template <Format F, Overflow M>
  void operator()() const {
    each([this](std::int64_t i, std::uint32_t(&word)[1]) {
      detail::quantize_rn_group<F, M, 4>(x + i, 0, scale, word, *c);
    });
  }
};

// Value k of the group starting at `start` is element start + k.
struct GroupIndex {
  std::int64_t start;
  FP8LAB_HD std::int64_t operator()(int k) const { return start + k; }
};

struct StochasticGroups : Groups {
  StochasticStream random;
  template <Format F, Overflow M>
  void operator()() const {
    each([this](std::int64_t i, std::uint32_t(&word)[1]) {
      detail::quantize_stochastic_group<F, M, 4>(x + i, 0, GroupIndex{i}, scale, random, word, *c);
    });
  }
};

void check_groups(const char* function, std::int64_t n) {
  if (n < 0 || n % 4 != 0) {
    throw std::invalid_argument(std::string(function) + ": n = " + std::to_string(n) +
                                "; accepted: a multiple of 4, >= 0");
  }
}

QuantizeCounts counts(const detail::Counters& c, std::int64_t n) {
  QuantizeCounts stats;
  stats.amax = c.amax;
  stats.count = static_cast<std::uint64_t>(n);
  stats.saturated = c.saturated;
  stats.underflowed = c.underflowed;
  stats.nan = c.nan;
  return stats;
}

}  // namespace

QuantizeCounts quantize_stochastic_groups(const float* x, std::int64_t n, float scale,
                                          sim::Format format, sim::Overflow mode,
                                          std::uint64_t seed, std::uint64_t stream,
                                          std::uint64_t first_index, std::uint8_t* codes) {
  check_groups("host_twin::quantize_stochastic_groups", n);
  detail::Counters c;
  detail::dispatch_format_mode(
      format, mode, "host_twin::quantize_stochastic_groups",
      StochasticGroups{{x, n, scale, codes, &c}, {seed, stream, first_index}});
  return counts(c, n);
}

bool rn_in_range(float y, sim::Format format) {
  detail::check_fp8(format, "host_twin::rn_in_range");
  return format == Format::E4M3 ? detail::rn_in_range<Format::E4M3>(y)
                                : detail::rn_in_range<Format::E5M2>(y);
}

bool all_rn_in_range(const float* x, int n, float scale, sim::Format format) {
  detail::check_fp8(format, "host_twin::all_rn_in_range");
  float amax = 0.0f;
  bool has_nan = false;
  for (int i = 0; i < n; ++i) {
    amax = detail::amax_update(amax, x[i]);
    has_nan = has_nan || std::isnan(x[i]);
  }
  return format == Format::E4M3 ? detail::all_rn_in_range<Format::E4M3>(amax, has_nan, scale)
                                : detail::all_rn_in_range<Format::E5M2>(amax, has_nan, scale);
}

QuantizeCounts quantize_rn_groups(const float* x, std::int64_t n, float scale, sim::Format format,
                                  sim::Overflow mode, std::uint8_t* codes) {
  check_groups("host_twin::quantize_rn_groups", n);
  detail::Counters c;
  detail::dispatch_format_mode(format, mode, "host_twin::quantize_rn_groups",
                               RnGroups{{x, n, scale, codes, &c}});
  return counts(c, n);
}

}  // namespace fp8lab::gpu::host_twin
