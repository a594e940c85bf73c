// The Highway lanes of E2M1 stochastic rounding (fp4_stochastic_lanes.cpp), which
// e2m1_stochastic_codes (fp4_stochastic.cpp) runs on checked arguments.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fp8lab::sim::fp4_detail {

// codes[i] for i < n as e2m1_stochastic_codes writes them.
void e2m1_stochastic_lanes(const float* x, std::size_t n, std::uint64_t seed, std::uint64_t stream,
                           std::uint64_t first_index, std::uint8_t* codes);

}  // namespace fp8lab::sim::fp4_detail
