// Packed storage of E2M1 (FP4) codes: two codes a byte, element 2i in the low nibble and 2i+1 in
// the high one. That is how torchao (pack_uint4 in mx_formats/kernels.py), TE (fp4e2m1x2 of
// float2{x, y}) and the hardware (cvt.rn.satfinite.e2m1x2.f32 puts its second operand low) store
// FP4, and what torch's float4_e2m1fn_x2 bytes hold (reference/fp4-formats.md §1). FP6 stays one
// code per byte (FormatSpec::codes_per_byte). An odd count leaves the last byte's high nibble 0;
// torchao refuses odd lengths, TE's row sizes are multiples of 16, so no peer shows a last nibble.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fp8lab::sim {

// Bytes that hold `count` E2M1 codes: ceil(count / 2).
constexpr std::size_t packed_e2m1_bytes(std::size_t count) { return count / 2 + count % 2; }

// codes[i] (each 0x0..0xF) -> packed, packed.size() == packed_e2m1_bytes(codes.size()).
// std::invalid_argument when a size does not match or a code has bits above the nibble (it names
// the index and the byte: a wider code here is an E2M3/E3M2 or FP8 code passed by mistake).
void pack_e2m1(std::span<const std::uint8_t> codes, std::span<std::uint8_t> packed);

// packed -> codes[0..codes.size()), packed.size() == packed_e2m1_bytes(codes.size()). With an odd
// count the last byte's high nibble must be 0 (what pack_e2m1 writes), else std::invalid_argument:
// a non-zero nibble there means the count does not belong to the data.
void unpack_e2m1(std::span<const std::uint8_t> packed, std::span<std::uint8_t> codes);

}  // namespace fp8lab::sim
