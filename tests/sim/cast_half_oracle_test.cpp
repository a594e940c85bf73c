// Exhaustive, against CUDA's host-side conversions (cuda_fp8.h, cuda_bf16.h, cuda_fp16.h compiled
// by g++; docs/numerics.md §1):
// - bf16 and fp16 inputs -> E4M3 / E5M2, all 2^16 patterns, satfinite and nosat, against
//   __nv_cvt_bfloat16raw_to_fp8 / __nv_cvt_halfraw_to_fp8; our side goes through the exact fp32
//   value (bf16_to_fp32 / fp16_to_fp32, then cast_fp32_to_fp8).
// - fp32 -> bf16 and fp32 -> fp16 (RNE), all 2^32 patterns, against __float2bfloat16 /
//   __float2half. NaN bytes included: both sides emit CUDA's canonical NaN 0x7FFF.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <catch2/catch.hpp>
#include <cstdio>

#include "sim/cast.hpp"
#include "tests/support/exhaustive.hpp"

namespace {

using fp8lab::sim::Format;
using fp8lab::sim::Overflow;

template <typename CudaCast, typename SimToFp32>
void check_all_16bit(const char* input, Format format, Overflow mode, CudaCast cuda_cast,
                     SimToFp32 to_fp32) {
  const auto interpretation = format == Format::E4M3 ? __NV_E4M3 : __NV_E5M2;
  const auto saturation = mode == Overflow::kSatFinite ? __NV_SATFINITE : __NV_NOSAT;
  fp8lab::testing::MismatchLog log;
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto raw = static_cast<std::uint16_t>(bits);
    const auto expected = static_cast<std::uint8_t>(cuda_cast(raw, saturation, interpretation));
    const float x = to_fp32(raw);
    const std::uint8_t actual = fp8lab::sim::cast_fp32_to_fp8(x, format, mode);
    if (expected != actual) {
      char line[160];
      std::snprintf(line, sizeof line, "%s 0x%04X (%.9g): cuda 0x%02X, sim 0x%02X", input, bits,
                    static_cast<double>(x), expected, actual);
      log.add(line);
    }
  }
  INFO(input << " -> " << fp8lab::sim::spec(format).name << " " << fp8lab::sim::to_string(mode)
             << ": " << log.report());
  CHECK(log.count == 0);
}

std::uint8_t cuda_bf16_to_fp8(std::uint16_t bits, __nv_saturation_t s,
                              __nv_fp8_interpretation_t i) {
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __nv_cvt_bfloat16raw_to_fp8(raw, s, i);
}
std::uint8_t cuda_fp16_to_fp8(std::uint16_t bits, __nv_saturation_t s,
                              __nv_fp8_interpretation_t i) {
  __half_raw raw;
  raw.x = bits;
  return __nv_cvt_halfraw_to_fp8(raw, s, i);
}

template <typename Cuda16, typename Sim16>
void check_all_fp32_to_16(const char* target, Cuda16 cuda_convert, Sim16 sim_convert) {
  fp8lab::testing::MismatchLog log;
  fp8lab::testing::log_cuda_mismatches_on_all_fp32(log, 4, cuda_convert, sim_convert);
  INFO("fp32 -> " << target << ": " << log.report());
  CHECK(log.count == 0);
}

}  // namespace

TEST_CASE("bf16 -> E4M3/E5M2 matches cuda_fp8.h on all 2^16 inputs, satfinite and nosat") {
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat}) {
      check_all_16bit("bf16", format, mode, cuda_bf16_to_fp8, fp8lab::sim::bf16_to_fp32);
    }
  }
}

TEST_CASE("fp16 -> E4M3/E5M2 matches cuda_fp8.h on all 2^16 inputs, satfinite and nosat") {
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    for (const Overflow mode : {Overflow::kSatFinite, Overflow::kNoSat}) {
      check_all_16bit("fp16", format, mode, cuda_fp16_to_fp8, fp8lab::sim::fp16_to_fp32);
    }
  }
}

TEST_CASE("fp32 -> bf16 (RNE) matches cuda_bf16.h's __float2bfloat16 on all 2^32 inputs") {
  check_all_fp32_to_16(
      "bf16", [](float x) { return static_cast<__nv_bfloat16_raw>(__float2bfloat16(x)).x; },
      fp8lab::sim::fp32_to_bf16);
}

TEST_CASE("fp32 -> fp16 (RNE) matches cuda_fp16.h's __float2half on all 2^32 inputs") {
  check_all_fp32_to_16(
      "fp16", [](float x) { return static_cast<__half_raw>(__float2half(x)).x; },
      fp8lab::sim::fp32_to_fp16);
}
