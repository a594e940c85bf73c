// Bulk quantize with a scale per run of elements, and the amax of each run: the two passes of the
// block and MX quantizers (sim/scaling/blocked.cpp) over one row in one call each, on the
// vectorized path of sim/quantize.cpp instead of one call per block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "sim/quantize.hpp"

namespace fp8lab::sim {

// The codes and statistics of quantize(x[r*run, (r+1)*run), scales[r], ...) for every run r
// (the last one may be shorter), merged in order: scales needs ceil(x.size() / run) values.
// Vectorized when run is 1 or a power of two >= 16 and those scales are finite; otherwise (and
// for the tail) it calls quantize run by run. Throws std::invalid_argument for run = 0 or too few
// scales, and as quantize does.
QuantizeStats quantize_scaled(std::span<const float> x, std::span<const float> scales,
                              std::size_t run, Format format, Overflow mode,
                              std::span<std::uint8_t> out);

// For each whole run r of x (at most amax.size() and has_nan.size() of them): amax[r] = the amax
// of the run (NaN ignored, as sim::amax) and has_nan[r] = whether it holds a NaN. Returns how many
// runs it did: 0 unless run is a power of two >= 16 (the caller handles those runs itself).
std::size_t run_amax(std::span<const float> x, std::size_t run, std::span<float> amax,
                     std::span<std::uint8_t> has_nan);

}  // namespace fp8lab::sim
