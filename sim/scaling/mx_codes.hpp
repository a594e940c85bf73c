// The E8M0 codes of a row of MX blocks at once: the scale rule of sim/scaling/mx.hpp
// (mx_scale_code, with the block's NaN folded in as quantize_mx does) over a span of block
// amaxes, vectorized with Highway (runtime dispatch, like sim/quantize.cpp) instead of one call
// chain per 32 elements. mx_scale_code stays the definition: tests/sim/scaling_mx_codes_test.cpp
// compares every mode, version, format and SIMD target with it, code for code.
#pragma once

#include <cstdint>
#include <span>

#include "sim/format.hpp"
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

// For each block j < amax.size():
//   codes[j] = mx_scale_code(has_nan[j] && mode != kTe ? NaN : amax[j], element, mode, torchao)
// i.e. TE's rule ignores a block's NaN (its amax is fmaxf's), torchao's propagate it. amax[j] is
// a NaN-ignoring amax (>= +0, possibly +Inf; a NaN amax is accepted too and gives what
// mx_scale_code gives for it). has_nan and codes need amax.size() elements, else
// std::invalid_argument. Every mode is vectorized; torchao-0.18's rceil (an fp32 log2) sends
// the blocks whose amax / fp8_max lies within 2^-16 above a power of two to the scalar rule.
void mx_scale_codes(std::span<const float> amax, std::span<const std::uint8_t> has_nan,
                    Format element, E8M0Mode mode, TorchaoVersion torchao,
                    std::span<std::uint8_t> codes);

}  // namespace fp8lab::sim::scaling
