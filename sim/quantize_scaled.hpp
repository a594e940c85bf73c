// Bulk quantize with a scale per run of elements, and the amax of each run or column: the two
// passes of the block and MX quantizers (sim/scaling/blocked.cpp) over one row (or band) in one
// call each, on the vectorized path of sim/quantize.cpp instead of one call per block.
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

// quantize_scaled of each row of x (x.size() / cols rows of cols elements), every row with the
// same scales, merged in row order: a band of the block walk whose blocks span several rows
// (N x 1, N x 32, N x 128), with the scales checked once per call instead of once per row.
// Throws std::invalid_argument when cols does not divide x.size(), and as quantize_scaled.
QuantizeStats quantize_scaled_rows(std::span<const float> x, std::size_t cols,
                                   std::span<const float> scales, std::size_t run, Format format,
                                   Overflow mode, std::span<std::uint8_t> out);

// For each whole run r of x (at most amax.size() and has_nan.size() of them): amax[r] = the amax
// of the run (NaN ignored, as sim::amax) and has_nan[r] = whether it holds a NaN. Returns how many
// runs it did: 0 unless run is a power of two >= 16 (the caller handles those runs itself).
std::size_t run_amax(std::span<const float> x, std::size_t run, std::span<float> amax,
                     std::span<std::uint8_t> has_nan);

// One row of a band of N x 1 blocks (a block per column): for each c < row.size() (at most
// amax.size() and has_nan.size()), amax[c] = max(amax[c], |row[c]|) with NaN ignored (amax
// must hold NaN-ignoring amaxes: >= +0, not NaN) and has_nan[c] |= whether row[c] is NaN
// (flags 0 or 1). Returns how many columns it did (the whole vectors; the caller does the rest).
std::size_t column_amax(std::span<const float> row, std::span<float> amax,
                        std::span<std::uint8_t> has_nan);

}  // namespace fp8lab::sim
