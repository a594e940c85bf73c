// torchao's MXFP8 ground truth and test blocks, shared by tests/sim/scaling_mx_test.cpp (torchao
// main), scaling_mx_versions_test.cpp (both versions) and tests/gpu/scaling_host_test.cpp (the
// host twin), with the bit helpers they use and check_rceil_block:
//   make_mxfp8_semantic_cases (torchao/testing/_mxfp8_test_utils.py, pytorch/ao 5d73a0c10): 18
//     named blocks x {fp32, bf16} x {floor, rceil}, exact bytes at main (the versions test
//     recomputes each for 0.18 and says why it differs or not);
//   test_to_mx_rceil's blocks (test/prototype/mx_formats/test_mx_tensor.py at v0.18.0);
//   adversarial_blocks: random blocks aimed at every difference between the versions.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/cast.hpp"
#include "sim/scaling/mx.hpp"

namespace fp8lab::test::mx {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }
inline float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// torch .to(bfloat16) (RNE) and back: the value a bf16 input tensor holds.
inline float as_bf16(float v) { return sim::bf16_to_fp32(sim::fp32_to_bf16(v)); }

struct SemanticCase {
  std::string name;
  std::vector<float> inputs;  // 32
  std::uint8_t scale;
  std::vector<std::uint8_t> data;  // 32
};

// make_mxfp8_semantic_cases(input_dtype, scaling_mode), transcribed case by case.
inline std::vector<SemanticCase> mxfp8_semantic_cases(bool bf16, bool is_floor) {
  auto hp = [bf16](float v) { return bf16 ? as_bf16(v) : v; };
  const float dtype_max = bf16 ? from_bits(0x7F7F'0000) : std::numeric_limits<float>::max();
  const float dtype_tiny = std::ldexp(1.0f, -126);
  const float smallest_subnormal_hp = bf16 ? from_bits(0x0001'0000) : from_bits(0x0000'0001);
  const std::uint8_t smallest_subnormal_data = bf16 ? 0x08 : 0x00;  // 2^-133/2^-127 = 2^-6, or 0
  const std::uint8_t max_scale = is_floor ? 246 : 247;              // 2^119 or 2^120
  const std::uint8_t max_data = is_floor ? 0x7E : 0x78;             // 448.0 or 256.0
  const float satfinite_hp = 480.0f;
  const std::uint8_t satfinite_scale = is_floor ? 127 : 128;
  const std::uint8_t satfinite_data = is_floor ? 0x7E : 0x77;  // 448.0 or 240.0

  std::vector<SemanticCase> cases;
  auto add = [&](const char* name, float fill, std::uint8_t scale, std::uint8_t data) {
    cases.push_back(
        {name, std::vector<float>(32, fill), scale, std::vector<std::uint8_t>(32, data)});
    return &cases.back();
  };
  add("zero", 0.0f, 0, 0x00);
  add("smallest_normal", dtype_tiny, 0, 0x40);
  add("mixed_inf", 1.0f, 255, 0x7F)->inputs[0] = kInf;
  add("mixed_nan", 1.0f, 255, 0x7F)->inputs[0] = kNaN;
  add("positive_fp8_max", 448.0f, 127, 0x7E);
  add("negative_fp8_max", -448.0f, 127, 0xFE);
  add("positive_dtype_max", dtype_max, max_scale, max_data);
  add("negative_dtype_max", -dtype_max, max_scale, max_data | 0x80);
  add("positive_smallest_subnormal", smallest_subnormal_hp, 0, smallest_subnormal_data);
  add("negative_smallest_subnormal", -smallest_subnormal_hp, 0, smallest_subnormal_data | 0x80);
  {
    SemanticCase* c = add("mixed_positive_underflow", 1.0f, 119, 0x78);
    c->inputs[0] = smallest_subnormal_hp;
    c->data[0] = 0x00;
  }
  {
    SemanticCase* c = add("mixed_negative_underflow", 1.0f, 119, 0x78);
    c->inputs[0] = -smallest_subnormal_hp;
    c->data[0] = 0x80;
  }
  {
    SemanticCase* c = add("mixed_saturation_and_underflow", 1.0f, max_scale, 0x00);
    c->inputs[0] = dtype_max;
    c->data[0] = max_data;
  }
  {
    const bool high = !is_floor && !bf16;
    add("rceil_premature_bf16_lowers_scale", hp(from_bits(0x4060'0001)), high ? 121 : 120,
        high ? 0x76 : 0x7E);
  }
  {
    const bool low = is_floor && !bf16;
    add("floor_premature_bf16_raises_scale", hp(from_bits(0x43FF'FFFF)), low ? 127 : 128,
        low ? 0x7E : 0x78);
  }
  add("all_nan", kNaN, 255, 0x7F);
  add("positive_satfinite", satfinite_hp, satfinite_scale, satfinite_data);
  add("negative_satfinite", -satfinite_hp, satfinite_scale, satfinite_data | 0x80);
  return cases;
}

inline std::string hex(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%X", v);
  return text;
}

// torchao test/prototype/mx_formats/test_mx_tensor.py::test_to_mx_rceil at v0.18.0: RCEIL, E4M3,
// 32-element blocks (fp32 bit patterns, or bf16 ones with `bf16`) with their ground-truth scale and
// bytes. The NaN block's truth is "scale NaN, every element NaN" (bytes 255 and 0x7F here).
// `at_main`: main's rules give the same bytes (the two denormal blocks differ there: main
// multiplies by 2^127 where v0.18's b == 0 reciprocal is 1.0).
struct RceilBlock {
  const char* name;
  bool bf16;
  std::vector<std::uint32_t> bits;
  int scale;
  std::vector<int> fp8;
  bool at_main;
};

inline std::vector<RceilBlock> to_mx_rceil_blocks() {
  return {
      {"nan",
       false,
       {2143289344, 1054459450, 1060527345, 1045656552, 1058239340, 1045057552, 1061158006,
        1049626606, 1052757568, 1032293288, 1056992320, 1064929425, 1061036255, 1047450552,
        1057077424, 1055125012, 1036491424, 1063542041, 1057099838, 1058731224, 1050189482,
        1049114228, 1058347802, 1060065968, 1058846156, 1048878912, 1065109089, 1054494928,
        1044803976, 1049117692, 1065222528, 1056965012},
       255,
       std::vector<int>(32, 0x7F),
       true},
      {"fp32 denorm",
       false,
       {6142315, 5096174, 3345704, 6178415, 5728750, 419002,  1716691, 4335089,
        5785800, 6234845, 1697524, 33075,   3975816, 3714822, 5411407, 3040844,
        7400945, 4474166, 7257182, 1273750, 5872176, 4694081, 2096530, 6273621,
        67028,   7585260, 4532315, 4599275, 6133942, 4542483, 5992199, 6862780},
       0,
       std::vector<int>(32, 0),
       false},
      {"bf16 denorm",
       true,
       {101, 3,  47, 54, 36, 19, 70, 79, 35, 95, 28, 120, 84, 94, 20, 92,
        18,  42, 98, 58, 3,  26, 64, 86, 60, 86, 52, 23,  61, 70, 59, 74},
       0,
       std::vector<int>(32, 0),
       false},
      {"fp32 some denorm",
       false,
       {8388608,    1063716449, 1064039365, 1063568877, 1051091338, 1062185569, 1034449408,
        1060813641, 1054893736, 1034907680, 1036660744, 1023639888, 1058536559, 1050896496,
        1049237634, 1064950601, 1051852994, 1059794063, 1054011102, 1062023602, 1059467900,
        1062276774, 1059155029, 1053287574, 1064378711, 1055768540, 1045266076, 1059575077,
        1054928758, 1040468200, 1058061961, 1053066436},
       119,
       {0,   118, 119, 118, 106, 117, 91,  116, 110, 91,  93,  80,  113, 106, 105, 120,
        107, 115, 109, 117, 114, 117, 114, 108, 119, 111, 101, 114, 110, 96,  113, 108},
       true},
      {"bf16 some denorm",
       true,
       {128,   16118, 16143, 16074, 16187, 16002, 16193, 16217, 15680, 16183, 16092,
        16158, 16251, 15876, 15896, 16194, 16135, 16214, 16205, 16110, 16122, 15960,
        15824, 16106, 16220, 16230, 15952, 15896, 16000, 16144, 16232, 16157},
       119,
       {0,   111, 113, 109, 116, 104, 116, 118, 84,  115, 110, 114, 120, 96,  98,  116,
        112, 117, 117, 111, 112, 102, 93,  111, 118, 118, 101, 98,  104, 113, 118, 114},
       true},
      {"zero", false, std::vector<std::uint32_t>(32, 0), 0, std::vector<int>(32, 0), true},
      {"fp32 normal",
       false,
       {1037408064, 1058534842, 1053630662, 1063310394, 994704128,  1057245441, 1060663708,
        1058053571, 1052395648, 1064831570, 1038427336, 1064777688, 1059248393, 1060959028,
        1062878286, 1057799482, 1057854101, 1053562724, 1027482352, 1060498324, 1063238522,
        1060472055, 1054346794, 1029092912, 1056687298, 1059146141, 1037992128, 1064097772,
        1056522806, 1059255744, 1064364912, 1060606252},
       119,
       {93,  113, 109, 118, 53,  112, 116, 113, 108, 120, 94, 119, 114, 116, 118, 113,
        113, 109, 84,  115, 118, 115, 110, 85,  112, 114, 94, 119, 112, 114, 119, 115},
       true},
      {"bf16 normal",
       true,
       {15752, 16143, 16182, 15896, 16195, 16186, 16048, 16223, 15988, 16231, 16140,
        16088, 16032, 16240, 16228, 16133, 16210, 16024, 16248, 16187, 16050, 15696,
        16060, 15956, 16131, 16251, 15896, 16014, 15808, 16024, 16159, 16186},
       119,
       {88,  113, 115, 98,  116, 116, 107, 118, 103, 118, 113, 110, 106, 119, 118, 112,
        117, 106, 120, 116, 107, 85,  108, 101, 112, 120, 98,  105, 92,  106, 114, 116},
       true},
  };
}

inline std::vector<float> block_values(const RceilBlock& b) {
  std::vector<float> x;
  for (const std::uint32_t u : b.bits) {
    x.push_back(b.bf16 ? sim::bf16_to_fp32(static_cast<std::uint16_t>(u)) : from_bits(u));
  }
  return x;
}

// One test_to_mx_rceil block through sim's RCEIL E4M3 quantizer at `version`: its scale byte and
// every element's code equal the ground truth (the block, element and input bits in a failure).
inline void check_rceil_block(const RceilBlock& b, sim::scaling::TorchaoVersion version) {
  namespace ss = sim::scaling;
  const ss::QuantizeResult r = ss::quantize_mx(block_values(b), 1, 32, ss::ScaleAxis::kRowwise,
                                               sim::Format::E4M3, ss::E8M0Mode::kRceil, version);
  INFO(b.name);
  CHECK(int(r.tensor.scale_e8m0[0]) == b.scale);
  for (std::size_t i = 0; i < 32; ++i) {
    INFO("element " << i << " input " << hex(b.bits[i]));
    CHECK(int(r.tensor.data[i]) == b.fp8[i]);
  }
}

// Random [rows, 32] blocks (row-major, one MX block per row) with every kind of amax the torchao
// versions treat differently: any binade, d = amax / fp8_max just above a power of two, tiny
// blocks, NaN, Inf, amax near FLT_MAX (tests/sim/scaling_mx_versions_test.cpp, and the GPU host
// twin test).
inline std::vector<float> adversarial_blocks(std::int64_t rows, sim::Format f, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> kind(0, 19), binade(-149, 127), ulps(0, 12), slot(0, 31);
  const auto fp8max = static_cast<float>(sim::spec(f).max_finite());
  std::vector<float> x(static_cast<std::size_t>(rows * 32));
  for (std::int64_t r = 0; r < rows; ++r) {
    const int k = kind(gen);
    float amax = std::ldexp(1.0f + std::fabs(unit(gen)), binade(gen));
    if (k < 4) {  // d just above 2^j: fp8_max * 2^j plus a few ulps
      const int j = std::uniform_int_distribution<int>(-135, 100)(gen);
      amax = from_bits(bits(fp8max * std::ldexp(1.0f, j)) + static_cast<std::uint32_t>(ulps(gen)));
    } else if (k < 6) {  // tiny: byte 0 in every mode
      amax = std::ldexp(1.0f + std::fabs(unit(gen)),
                        std::uniform_int_distribution<int>(-149, -119)(gen));
    } else if (k == 6) {
      amax = from_bits(0x7F7F'FFFFu - static_cast<std::uint32_t>(ulps(gen)) * 0x1'0000u);
    }
    if (!std::isfinite(amax)) amax = std::numeric_limits<float>::max();
    float* row = x.data() + r * 32;
    for (int i = 0; i < 32; ++i) row[i] = amax * unit(gen);
    row[slot(gen)] = unit(gen) < 0 ? -amax : amax;
    if (k == 7) row[slot(gen)] = kNaN;
    if (k == 8) row[slot(gen)] = unit(gen) < 0 ? -kInf : kInf;
  }
  return x;
}

}  // namespace fp8lab::test::mx
