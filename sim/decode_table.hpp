// The decode table of an element format: the value of every byte as decode_element (sim/cast.hpp)
// gives it, built once per process. The GEMM's code tables (sim/gemm/plan.cpp) and the scaling
// statistics (sim/scaling/stats.cpp) look their values up here rather than build their own.
#pragma once

#include <array>

#include "sim/format.hpp"

namespace fp8lab::sim {

// E4M3, E5M2, E2M1, E2M3, E3M2: the table decode_fp8 and decode_subbyte read (NaN for a byte
// with bits above a sub-byte format's width); nullptr for any other format.
const std::array<float, 256>* element_decode_table(Format format);

}  // namespace fp8lab::sim
