// MXFP8 (sim/scaling/mx.hpp) against torchao's MX test utilities and TE's CPU reference:
//   torchao/testing/_mxfp8_test_utils.py (pytorch/ao 5d73a0c10): make_mxfp8_semantic_cases (18
//     named blocks x {fp32, bf16} x {floor, rceil}, exact bytes) and make_f32_to_e8m0_rceil_cases
//     (18 fp32 bit patterns around the RCEIL boundaries);
//   TransformerEngine tests/cpp/test_common.h (float_to_e8m0, exp2f_rcp) and
//     tests/cpp/operator/test_cast_mxfp8.cu compute_ref: the TE formula on random blocks;
// plus the OCP property for `floor` and the layout of the two copies and the 2-D mode.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/cast.hpp"
#include "sim/scaling/mx.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

// torch .to(bfloat16) (RNE) and back: the value a bf16 input tensor holds.
float as_bf16(float v) { return bf16_to_fp32(fp32_to_bf16(v)); }

struct SemanticCase {
  std::string name;
  std::vector<float> inputs;  // 32
  std::uint8_t scale;
  std::vector<std::uint8_t> data;  // 32
};

// make_mxfp8_semantic_cases(input_dtype, scaling_mode), transcribed case by case.
std::vector<SemanticCase> mxfp8_semantic_cases(bool bf16, bool is_floor) {
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
    cases.push_back({name, std::vector<float>(32, fill), scale, std::vector<std::uint8_t>(32, data)});
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

std::string hex(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%X", v);
  return text;
}

// TE tests/cpp/test_common.h float_to_e8m0 and exp2f_rcp, written out from the quoted upstream
// source as the oracle (independent of sim/scaling/mx.cpp).
std::uint8_t te_ref_float_to_e8m0(float val) {
  if (std::isnan(val)) return 0xFF;
  if (std::isinf(val)) return 0xFE;
  if (val == 0.0f) return 0x00;
  std::uint32_t val_u32;
  std::memcpy(&val_u32, &val, 4);
  auto exponent = static_cast<std::uint8_t>(val_u32 >> 23);
  const std::uint32_t mantissa = val_u32 & 0x7FFFFF;
  if ((mantissa > 0 && exponent != 0xFE) && !(exponent == 0 && mantissa <= 0x400000)) ++exponent;
  return exponent;
}
float te_ref_exp2f_rcp(std::uint8_t biased_exp) {
  std::int32_t int_val = 0;
  if (biased_exp == 255) {
    int_val = 0x7fffffff;
  } else if (biased_exp == 254) {
    int_val = 0x00400000;
  } else {
    int_val = (254 - biased_exp) << 23;
  }
  float f;
  std::memcpy(&f, &int_val, 4);
  return f;
}

}  // namespace

TEST_CASE("torchao make_mxfp8_semantic_cases: 18 named blocks, fp32 and bf16, floor and rceil") {
  for (const bool bf16 : {false, true}) {
    for (const bool is_floor : {true, false}) {
      const E8M0Mode mode = is_floor ? E8M0Mode::kFloor : E8M0Mode::kRceil;
      for (const SemanticCase& c : mxfp8_semantic_cases(bf16, is_floor)) {
        const QuantizeResult r = quantize_mx(c.inputs, 1, 32, ScaleAxis::kRowwise, Format::E4M3, mode);
        INFO(c.name << (bf16 ? " bf16 " : " fp32 ") << to_string(mode) << ": scale "
                    << int(r.tensor.scale_e8m0[0]) << " expected " << int(c.scale)
                    << "; input[1] " << hex(bits(c.inputs[1])));
        REQUIRE(r.tensor.scale_e8m0.size() == 1);
        CHECK(r.tensor.scale_e8m0[0] == c.scale);
        for (std::size_t i = 0; i < 32; ++i) {
          INFO("element " << i << " input " << hex(bits(c.inputs[i])) << " got "
                          << hex(r.tensor.data[i]) << " expected " << hex(c.data[i]));
          CHECK(r.tensor.data[i] == c.data[i]);
        }
      }
    }
  }
}

// torchao test/prototype/mx_formats/test_mx_tensor.py::test_to_mx_rceil: hard-coded 32-element
// blocks with their ground-truth scale and E4M3 bytes (RCEIL). Only the blocks whose semantics
// torchao's post-v0.18 change kept (torchao-mx.md §4.2-4.3): "fp32/bf16 some denorm", "zero",
// "fp32/bf16 normal". Its NaN and all-denormal blocks encode the legacy rules (NaN -> only that
// element NaN; tiny blocks -> 0), which HEAD replaced; the semantic cases above cover HEAD there.
TEST_CASE("torchao test_to_mx_rceil ground-truth blocks (rules unchanged at HEAD)") {
  struct Block {
    const char* name;
    bool bf16;
    std::vector<std::uint32_t> bits;
    int scale;
    std::vector<int> fp8;
  };
  const Block blocks[] = {
      {"fp32 some denorm", false,
       {8388608, 1063716449, 1064039365, 1063568877, 1051091338, 1062185569, 1034449408, 1060813641,
        1054893736, 1034907680, 1036660744, 1023639888, 1058536559, 1050896496, 1049237634, 1064950601,
        1051852994, 1059794063, 1054011102, 1062023602, 1059467900, 1062276774, 1059155029, 1053287574,
        1064378711, 1055768540, 1045266076, 1059575077, 1054928758, 1040468200, 1058061961, 1053066436},
       119,
       {0, 118, 119, 118, 106, 117, 91, 116, 110, 91, 93, 80, 113, 106, 105, 120,
        107, 115, 109, 117, 114, 117, 114, 108, 119, 111, 101, 114, 110, 96, 113, 108}},
      {"bf16 some denorm", true,
       {128, 16118, 16143, 16074, 16187, 16002, 16193, 16217, 15680, 16183, 16092, 16158, 16251, 15876, 15896, 16194,
        16135, 16214, 16205, 16110, 16122, 15960, 15824, 16106, 16220, 16230, 15952, 15896, 16000, 16144, 16232, 16157},
       119,
       {0, 111, 113, 109, 116, 104, 116, 118, 84, 115, 110, 114, 120, 96, 98, 116,
        112, 117, 117, 111, 112, 102, 93, 111, 118, 118, 101, 98, 104, 113, 118, 114}},
      {"zero", false, std::vector<std::uint32_t>(32, 0), 0, std::vector<int>(32, 0)},
      {"fp32 normal", false,
       {1037408064, 1058534842, 1053630662, 1063310394, 994704128, 1057245441, 1060663708, 1058053571,
        1052395648, 1064831570, 1038427336, 1064777688, 1059248393, 1060959028, 1062878286, 1057799482,
        1057854101, 1053562724, 1027482352, 1060498324, 1063238522, 1060472055, 1054346794, 1029092912,
        1056687298, 1059146141, 1037992128, 1064097772, 1056522806, 1059255744, 1064364912, 1060606252},
       119,
       {93, 113, 109, 118, 53, 112, 116, 113, 108, 120, 94, 119, 114, 116, 118, 113,
        113, 109, 84, 115, 118, 115, 110, 85, 112, 114, 94, 119, 112, 114, 119, 115}},
      {"bf16 normal", true,
       {15752, 16143, 16182, 15896, 16195, 16186, 16048, 16223, 15988, 16231, 16140, 16088, 16032, 16240, 16228, 16133,
        16210, 16024, 16248, 16187, 16050, 15696, 16060, 15956, 16131, 16251, 15896, 16014, 15808, 16024, 16159, 16186},
       119,
       {88, 113, 115, 98, 116, 116, 107, 118, 103, 118, 113, 110, 106, 119, 118, 112,
        117, 106, 120, 116, 107, 85, 108, 101, 112, 120, 98, 105, 92, 106, 114, 116}},
  };
  for (const Block& b : blocks) {
    std::vector<float> x;
    for (const std::uint32_t u : b.bits) {
      x.push_back(b.bf16 ? bf16_to_fp32(static_cast<std::uint16_t>(u)) : from_bits(u));
    }
    const QuantizeResult r = quantize_mx(x, 1, 32, ScaleAxis::kRowwise, Format::E4M3, E8M0Mode::kRceil);
    INFO(b.name);
    CHECK(int(r.tensor.scale_e8m0[0]) == b.scale);
    for (std::size_t i = 0; i < 32; ++i) {
      INFO("element " << i << " input " << hex(b.bits[i]));
      CHECK(int(r.tensor.data[i]) == b.fp8[i]);
    }
  }
}

TEST_CASE("torchao make_f32_to_e8m0_rceil_cases: 18 RCEIL boundaries") {
  const std::pair<std::uint32_t, int> cases[] = {
      {0x00000000, 0},   {0x00000001, 0},   {0x00400000, 0},   {0x00400001, 1},
      {0x007FFFFF, 1},   {0x00800000, 1},   {0x1F800000, 63},  {0x1F800001, 64},
      {0x3F7FFFFF, 127}, {0x3F800000, 127}, {0x3F800001, 128}, {0x5F800000, 191},
      {0x5F800001, 192}, {0x7F000000, 254}, {0x7F000001, 255}, {0x7F7FFFFF, 255},
      {0x7F800000, 255}, {0x7FC00000, 255},
  };
  for (const auto& [input, expected] : cases) {
    INFO("input " << hex(input));
    CHECK(int(rceil_float_to_e8m0(from_bits(input))) == expected);
  }
}

TEST_CASE("TE float_to_e8m0: round up, satfinite (te-accelerate.md §4.3)") {
  CHECK(te_float_to_e8m0(kNaN) == 0xFF);
  CHECK(te_float_to_e8m0(kInf) == 0xFE);
  CHECK(te_float_to_e8m0(0.0f) == 0x00);
  CHECK(te_float_to_e8m0(from_bits(0x0040'0000)) == 0x00);  // 2^-127 exactly
  CHECK(te_float_to_e8m0(from_bits(0x0040'0001)) == 0x01);
  CHECK(te_float_to_e8m0(1.0f) == 127);
  CHECK(te_float_to_e8m0(from_bits(0x3F80'0001)) == 128);
  CHECK(te_float_to_e8m0(from_bits(0x7F00'0001)) == 0xFE);  // E = 0xFE is not incremented
  CHECK(te_float_to_e8m0(std::numeric_limits<float>::max()) == 0xFE);
  // The multiplier 2^(127 - e) with TE test_common.h's special codes.
  CHECK(bits(mx_element_multiplier(0)) == 0x7F00'0000u);    // 2^127
  CHECK(bits(mx_element_multiplier(127)) == 0x3F80'0000u);  // 1
  CHECK(bits(mx_element_multiplier(253)) == 0x0080'0000u);  // 2^-126
  CHECK(bits(mx_element_multiplier(254)) == 0x0040'0000u);  // 2^-127
  CHECK(std::isnan(mx_element_multiplier(255)));
  // fl(1/448) and fl(1/57344) as the reference gives them.
  CHECK(mx_scale_code(448.0f, Format::E4M3, E8M0Mode::kTe) == 127);
  CHECK(bits(static_cast<float>(1.0 / 448.0)) == 0x3B12'4925u);
  CHECK(bits(static_cast<float>(1.0 / 57344.0)) == 0x3792'4925u);
}

// te-accelerate.md §4.3 properties: TE rounds the scale up where OCP floor saturates; zero, Inf
// and all-NaN blocks.
TEST_CASE("TE mode: 449 gives scale 2, OCP floor gives 1 and saturates; special blocks") {
  std::vector<float> block(32, 1.0f);
  block[3] = 449.0f;
  const QuantizeResult te = quantize_mx(block, 1, 32, ScaleAxis::kRowwise, Format::E4M3);
  const QuantizeResult fl =
      quantize_mx(block, 1, 32, ScaleAxis::kRowwise, Format::E4M3, E8M0Mode::kFloor);
  CHECK(te.tensor.scale_e8m0[0] == 128);
  CHECK(te.tensor.scale_inv[0] == 2.0f);
  CHECK(fl.tensor.scale_e8m0[0] == 127);
  CHECK(fl.tensor.data[3] == 0x7E);  // 449 rounds to 448 (an ordinary rounding, not counted)
  // 480 lies past E4M3's overflow threshold 464: floor saturates it, TE's scale 2 does not.
  block[3] = 480.0f;
  CHECK(quantize_mx(block, 1, 32, ScaleAxis::kRowwise, Format::E4M3, E8M0Mode::kFloor).stats.saturated == 1);
  CHECK(quantize_mx(block, 1, 32, ScaleAxis::kRowwise, Format::E4M3).stats.saturated == 0);

  const std::vector<float> zeros(32, 0.0f);
  const QuantizeResult z = quantize_mx(zeros, 1, 32, ScaleAxis::kRowwise, Format::E4M3);
  CHECK(z.tensor.scale_e8m0[0] == 0);
  CHECK(bits(z.tensor.scale[0]) == 0x7F00'0000u);  // mult 2^127
  for (auto q : z.tensor.data) CHECK(q == 0x00);

  std::vector<float> with_inf(32, 1.0f);
  with_inf[0] = -kInf;
  const QuantizeResult i = quantize_mx(with_inf, 1, 32, ScaleAxis::kRowwise, Format::E4M3);
  CHECK(i.tensor.scale_e8m0[0] == 0xFE);
  CHECK(i.tensor.data[0] == 0xFE);  // -Inf -> -448
  CHECK(i.tensor.data[1] == 0x00);  // 1 * 2^-127 flushes
  CHECK(i.stats.underflowed == 31);

  const std::vector<float> nans(32, kNaN);
  const QuantizeResult n = quantize_mx(nans, 1, 32, ScaleAxis::kRowwise, Format::E4M3);
  CHECK(n.tensor.scale_e8m0[0] == 0);  // TE's amax ignores NaN: 0
  for (auto q : n.tensor.data) CHECK(q == 0x7F);
  CHECK(n.stats.nan == 32);
}

// test_cast_mxfp8.cu compute_ref: scale = float_to_e8m0(block_amax * max_reciprocal),
// q = OT(elt * exp2f_rcp(scale)), OT = __nv_fp8_e*(float) = satfinite RNE (sim::cast, proven
// against cuda_fp8.h). Scales are compared with zero tolerance upstream; so are ours, and bytes.
TEST_CASE("TE MXFP8 CPU reference formula on random blocks, E4M3 and E5M2, both copies") {
  std::mt19937 gen(20260);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-140, 120);
  const std::int64_t rows = 96;
  const std::int64_t cols = 64;
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    const auto max_reciprocal = static_cast<float>(1.0 / static_cast<double>(spec(format).max_finite()));
    for (int trial = 0; trial < 20; ++trial) {
      // Each 32 x 32 region gets its own magnitude so that blocks span the whole fp32 range.
      std::vector<float> x(static_cast<std::size_t>(rows * cols));
      std::vector<int> region_exp(9);
      for (int& e : region_exp) e = exponent(gen);
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t c = 0; c < cols; ++c) {
          const int e = region_exp[static_cast<std::size_t>((r / 32) * 3 + c / 32 % 3)];
          x[static_cast<std::size_t>(r * cols + c)] = std::ldexp(unit(gen), e);
        }
      }
      const MxCopies copies = quantize_mx_copies(x, rows, cols, format);
      for (const bool rowwise : {true, false}) {
        const QuantizedTensor& t = rowwise ? copies.rowwise.tensor : copies.columnwise.tensor;
        REQUIRE(t.block_rows == (rowwise ? 1 : 32));
        REQUIRE(t.block_cols == (rowwise ? 32 : 1));
        for (std::int64_t b = 0; b < (rowwise ? rows * (cols / 32) : (rows / 32) * cols); ++b) {
          const std::int64_t r0 = rowwise ? b / (cols / 32) : (b / cols) * 32;
          const std::int64_t c0 = rowwise ? (b % (cols / 32)) * 32 : b % cols;
          auto at = [&](int k) {
            return rowwise ? static_cast<std::size_t>(r0 * cols + c0 + k)
                           : static_cast<std::size_t>((r0 + k) * cols + c0);
          };
          float block_amax = 0.0f;
          for (int k = 0; k < 32; ++k) block_amax = std::fmax(block_amax, std::fabs(x[at(k)]));
          const std::uint8_t scale = te_ref_float_to_e8m0(block_amax * max_reciprocal);
          const std::size_t s = static_cast<std::size_t>(rowwise ? r0 * (cols / 32) + c0 / 32
                                                                 : (r0 / 32) * cols + c0);
          INFO((rowwise ? "rowwise" : "columnwise") << " block " << b << " amax "
                                                    << hex(bits(block_amax)));
          REQUIRE(int(t.scale_e8m0[s]) == int(scale));
          REQUIRE(bits(t.scale_inv[s]) == bits(decode_e8m0(scale)));
          for (int k = 0; k < 32; ++k) {
            const std::uint8_t expected =
                cast_fp32_to_fp8(x[at(k)] * te_ref_exp2f_rcp(scale), format, Overflow::kSatFinite);
            INFO("element " << k << " x " << hex(bits(x[at(k)])));
            REQUIRE(int(t.data[at(k)]) == int(expected));
          }
        }
      }
    }
  }
}

// OCP MX v1.0 (torchao-mx.md §4.1): X = 2^(floor(log2 amax) - emax_elem), clamped to the E8M0
// range. `floor` must be exactly that, and every other mode scales at least as much.
TEST_CASE("MX property: floor is the OCP scale and never exceeds the other modes") {
  std::mt19937 gen(5);
  std::uniform_int_distribution<std::uint32_t> pattern(0x0000'0001u, 0x7F7F'FFFFu);
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    const int emax = format == Format::E4M3 ? 8 : 15;  // 448 = 1.75 * 2^8, 57344 = 1.75 * 2^15
    for (int i = 0; i < 200000; ++i) {
      const float amax = from_bits(pattern(gen));
      int e2 = 0;
      std::frexp(amax, &e2);  // amax = f * 2^e2, f in [0.5, 1): floor(log2 amax) = e2 - 1
      const int ocp = std::clamp(e2 - 1 - emax, -127, 127);
      const std::uint8_t floor_code = mx_scale_code(amax, format, E8M0Mode::kFloor);
      INFO(spec(format).name << " amax " << hex(bits(amax)));
      REQUIRE(int(floor_code) == ocp + 127);
      for (const E8M0Mode other :
           {E8M0Mode::kTe, E8M0Mode::kCeil, E8M0Mode::kEven, E8M0Mode::kRceil}) {
        INFO("mode " << to_string(other));
        REQUIRE(mx_scale_code(amax, format, other) >= floor_code);
      }
    }
  }
}

TEST_CASE("MX modes ceil and even at their boundaries (torchao-mx.md §4.2)") {
  // ceil: a non-zero mantissa adds one; a power of two does not.
  CHECK(mx_scale_code(256.0f, Format::E4M3, E8M0Mode::kCeil) == 127);
  CHECK(mx_scale_code(std::nextafter(256.0f, kInf), Format::E4M3, E8M0Mode::kCeil) == 128);
  // even (E4M3, mbits 3): significand >= 2 - 2^-4 = 1.9375 rounds amax up to the next power.
  CHECK(mx_scale_code(1.9375f * 256.0f, Format::E4M3, E8M0Mode::kEven) == 128);
  CHECK(mx_scale_code(std::nextafter(1.9375f, 0.0f) * 256.0f, Format::E4M3, E8M0Mode::kEven) == 127);
  // E5M2 (mbits 2): the threshold is 2 - 2^-3 = 1.875.
  CHECK(mx_scale_code(1.875f, Format::E5M2, E8M0Mode::kEven) == 127 + 1 - 15);
  CHECK(mx_scale_code(1.87f, Format::E5M2, E8M0Mode::kEven) == 127 - 15);
  // NaN and Inf give 255 in floor, ceil and even at torchao HEAD; amax that `even` rounds to Inf
  // too.
  for (const E8M0Mode m : {E8M0Mode::kFloor, E8M0Mode::kCeil, E8M0Mode::kEven}) {
    CHECK(mx_scale_code(kNaN, Format::E4M3, m) == 255);
    CHECK(mx_scale_code(kInf, Format::E4M3, m) == 255);
  }
  CHECK(mx_scale_code(std::numeric_limits<float>::max(), Format::E4M3, E8M0Mode::kEven) == 255);
  CHECK(mx_scale_code(std::numeric_limits<float>::max(), Format::E4M3, E8M0Mode::kCeil) == 247);
}

TEST_CASE("MX layouts: columnwise runs down 32 rows, 2-D tiles share one scale, edges clip") {
  const std::int64_t rows = 64;
  const std::int64_t cols = 40;  // a partial 8-wide block at the right edge
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      x[static_cast<std::size_t>(r * cols + c)] = static_cast<float>(r + 1) * (c % 2 ? -1.0f : 1.0f);
    }
  }
  const QuantizeResult row = quantize_mx(x, rows, cols, ScaleAxis::kRowwise, Format::E4M3);
  REQUIRE(row.tensor.scale_rows() == 64);
  REQUIRE(row.tensor.scale_cols() == 2);
  // Row r: amax r + 1 in both blocks (the edge block holds 8 valid elements).
  CHECK(row.tensor.scale_e8m0[0] == mx_scale_code(1.0f, Format::E4M3, E8M0Mode::kTe));
  CHECK(row.tensor.scale_e8m0[2 * 63 + 1] == mx_scale_code(64.0f, Format::E4M3, E8M0Mode::kTe));

  const QuantizeResult col = quantize_mx(x, rows, cols, ScaleAxis::kColumnwise, Format::E4M3);
  REQUIRE(col.tensor.scale_rows() == 2);
  REQUIRE(col.tensor.scale_cols() == 40);
  for (std::int64_t c = 0; c < cols; ++c) {
    CHECK(col.tensor.scale_e8m0[static_cast<std::size_t>(c)] ==
          mx_scale_code(32.0f, Format::E4M3, E8M0Mode::kTe));
    CHECK(col.tensor.scale_e8m0[static_cast<std::size_t>(cols + c)] ==
          mx_scale_code(64.0f, Format::E4M3, E8M0Mode::kTe));
  }
  // Element (31, c) of the columnwise copy uses the column block's multiplier.
  const float m = col.tensor.scale[0];
  CHECK(col.tensor.code_at(31, 0) == cast_fp32_to_fp8(32.0f * m, Format::E4M3, Overflow::kSatFinite));

  const QuantizeResult tile = quantize_mx_2d(x, rows, cols, Format::E4M3);
  REQUIRE(tile.tensor.scale_rows() == 2);
  REQUIRE(tile.tensor.scale_cols() == 2);
  CHECK(tile.tensor.scale_e8m0[0] == mx_scale_code(32.0f, Format::E4M3, E8M0Mode::kTe));
  CHECK(tile.tensor.scale_e8m0[3] == mx_scale_code(64.0f, Format::E4M3, E8M0Mode::kTe));
  CHECK(tile.tensor.scale_inv_at(40, 35) == decode_e8m0(tile.tensor.scale_e8m0[3]));
}

// te-accelerate.md §4.2: fprop X rowwise x W rowwise; dgrad dY rowwise x W columnwise; wgrad X
// columnwise x dY columnwise; with enable_2d_quantization the weight is 32 x 32 everywhere.
TEST_CASE("MX operand copies per GEMM") {
  const std::vector<float> x(64 * 64, 1.5f);
  auto shape = [&](Gemm g, Operand o, bool weight_2d) {
    const QuantizeResult r = quantize_mx_operand(x, 64, 64, g, o, Format::E4M3, E8M0Mode::kTe, weight_2d);
    return std::pair<std::int64_t, std::int64_t>{r.tensor.block_rows, r.tensor.block_cols};
  };
  using P = std::pair<std::int64_t, std::int64_t>;
  CHECK(shape(Gemm::kFprop, Operand::kInput, false) == P{1, 32});
  CHECK(shape(Gemm::kFprop, Operand::kWeight, false) == P{1, 32});
  CHECK(shape(Gemm::kDgrad, Operand::kGradOutput, false) == P{1, 32});
  CHECK(shape(Gemm::kDgrad, Operand::kWeight, false) == P{32, 1});
  CHECK(shape(Gemm::kWgrad, Operand::kInput, false) == P{32, 1});
  CHECK(shape(Gemm::kWgrad, Operand::kGradOutput, false) == P{32, 1});
  CHECK(shape(Gemm::kDgrad, Operand::kWeight, true) == P{32, 32});
  CHECK(shape(Gemm::kFprop, Operand::kInput, true) == P{1, 32});
  CHECK_THROWS_WITH(shape(Gemm::kFprop, Operand::kGradOutput, false),
                    Catch::Contains("not an operand of gemm = fprop"));
}
