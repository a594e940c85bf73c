// The sub-byte element cast of the blocked walk (blocked.hpp, pass 2 for E2M1, E2M3 and E3M2):
// q_i = cast_fp32_to_subbyte(RN(x_i * s_block), specials) and its statistics, element by element
// (subbyte_rows_scalar, the model) and in Highway lanes (subbyte_rows_lanes, subbyte_lanes.cpp,
// the same bits and counts on every target; blocked.cpp runs it, the tests compare the two).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sim/cast.hpp"
#include "sim/format.hpp"
#include "sim/quantize.hpp"

namespace fp8lab::sim::scaling::subbyte_detail {

// Rows of `cols` elements, x[0, n) (n a multiple of cols), a block multiplier every `run` columns
// (scales[c / run] for column c): out[i] = cast_fp32_to_subbyte(x[i] * scales[(i % cols) / run],
// format, specials). The statistics: count, saturated (|y| at or above max + half an ulp, or
// ±Inf), underflowed (x != 0 and a ±0 code), nan (y NaN); amax is left 0 (the walk's pass 1 has
// it). format must be E2M1, E2M3 or E3M2 (the caller checked).
QuantizeStats subbyte_rows_scalar(const float* x, std::size_t n, std::size_t cols,
                                  const float* scales, std::size_t run, Format format,
                                  SubbyteSpecials specials, std::uint8_t* out);
QuantizeStats subbyte_rows_lanes(const float* x, std::size_t n, std::size_t cols,
                                 const float* scales, std::size_t run, Format format,
                                 SubbyteSpecials specials, std::uint8_t* out);

// The Highway target subbyte_rows_lanes dispatches to (tests name it in failures).
const char* subbyte_rows_target_name();

}  // namespace fp8lab::sim::scaling::subbyte_detail
