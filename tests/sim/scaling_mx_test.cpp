// MXFP8 (sim/scaling/mx.hpp) against torchao's MX test utilities and TE's CPU reference:
//   torchao/testing/_mxfp8_test_utils.py (pytorch/ao 5d73a0c10): make_mxfp8_semantic_cases (18
//     named blocks x {fp32, bf16} x {floor, rceil}, exact bytes; mx_cases.hpp) and
//     make_f32_to_e8m0_rceil_cases (18 fp32 bit patterns around the RCEIL boundaries), which
//     encode torchao main: they run with TorchaoVersion::kMain (torchao-0.18, the default, has
//     its own table in scaling_mx_versions_test.cpp);
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
#include "tests/sim/mx_cases.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::test::mx;

namespace {

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

TEST_CASE(
    "torchao-main make_mxfp8_semantic_cases: 18 named blocks, fp32 and bf16, floor and rceil") {
  for (const bool bf16 : {false, true}) {
    for (const bool is_floor : {true, false}) {
      const E8M0Mode mode = is_floor ? E8M0Mode::kFloor : E8M0Mode::kRceil;
      for (const SemanticCase& c : mxfp8_semantic_cases(bf16, is_floor)) {
        const QuantizeResult r = quantize_mx(c.inputs, 1, 32, ScaleAxis::kRowwise, Format::E4M3,
                                             mode, TorchaoVersion::kMain);
        INFO(c.name << (bf16 ? " bf16 " : " fp32 ") << to_string(mode) << ": scale "
                    << int(r.tensor.scale_e8m0[0]) << " expected " << int(c.scale) << "; input[1] "
                    << hex(bits(c.inputs[1])));
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

// torchao test/prototype/mx_formats/test_mx_tensor.py::test_to_mx_rceil (mx_cases.hpp):
// the blocks whose ground truth main's rules keep (its denormal blocks encode v0.18's b == 0 -> 1.0
// reciprocal, which main replaced; scaling_mx_versions_test.cpp runs all of them at v0.18).
TEST_CASE("torchao-main test_to_mx_rceil ground-truth blocks (rules unchanged at main)") {
  for (const RceilBlock& b : to_mx_rceil_blocks()) {
    if (b.at_main) check_rceil_block(b, TorchaoVersion::kMain);
  }
}

TEST_CASE("torchao make_f32_to_e8m0_rceil_cases: 18 RCEIL boundaries") {
  const std::pair<std::uint32_t, int> cases[] = {
      {0x00000000, 0},   {0x00000001, 0},   {0x00400000, 0},   {0x00400001, 1},   {0x007FFFFF, 1},
      {0x00800000, 1},   {0x1F800000, 63},  {0x1F800001, 64},  {0x3F7FFFFF, 127}, {0x3F800000, 127},
      {0x3F800001, 128}, {0x5F800000, 191}, {0x5F800001, 192}, {0x7F000000, 254}, {0x7F000001, 255},
      {0x7F7FFFFF, 255}, {0x7F800000, 255}, {0x7FC00000, 255},
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
  CHECK(quantize_mx(block, 1, 32, ScaleAxis::kRowwise, Format::E4M3, E8M0Mode::kFloor)
            .stats.saturated == 1);
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
    const auto max_reciprocal =
        static_cast<float>(1.0 / static_cast<double>(spec(format).max_finite()));
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
          INFO((rowwise ? "rowwise" : "columnwise")
               << " block " << b << " amax " << hex(bits(block_amax)));
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
// range. `floor` must be exactly that, and every other mode scales at least as much, in both
// torchao versions (they differ on finite amax only in rceil's arithmetic).
TEST_CASE("MX property: floor is the OCP scale and never exceeds the other modes") {
  std::mt19937 gen(5);
  std::uniform_int_distribution<std::uint32_t> pattern(0x0000'0001u, 0x7F7F'FFFFu);
  for (const Format format : {Format::E4M3, Format::E5M2}) {
    const int emax = format == Format::E4M3 ? 8 : 15;  // 448 = 1.75 * 2^8, 57344 = 1.75 * 2^15
    for (int i = 0; i < 100000; ++i) {
      const float amax = from_bits(pattern(gen));
      int e2 = 0;
      std::frexp(amax, &e2);  // amax = f * 2^e2, f in [0.5, 1): floor(log2 amax) = e2 - 1
      const int ocp = std::clamp(e2 - 1 - emax, -127, 127);
      for (const TorchaoVersion v : {TorchaoVersion::kV0_18, TorchaoVersion::kMain}) {
        const std::uint8_t floor_code = mx_scale_code(amax, format, E8M0Mode::kFloor, v);
        INFO(spec(format).name << " amax " << hex(bits(amax)) << " " << to_string(v));
        REQUIRE(int(floor_code) == ocp + 127);
        for (const E8M0Mode other :
             {E8M0Mode::kTe, E8M0Mode::kCeil, E8M0Mode::kEven, E8M0Mode::kRceil}) {
          INFO("mode " << to_string(other));
          REQUIRE(mx_scale_code(amax, format, other, v) >= floor_code);
        }
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
  CHECK(mx_scale_code(std::nextafter(1.9375f, 0.0f) * 256.0f, Format::E4M3, E8M0Mode::kEven) ==
        127);
  // E5M2 (mbits 2): the threshold is 2 - 2^-3 = 1.875.
  CHECK(mx_scale_code(1.875f, Format::E5M2, E8M0Mode::kEven) == 127 + 1 - 15);
  CHECK(mx_scale_code(1.87f, Format::E5M2, E8M0Mode::kEven) == 127 - 15);
  // NaN and Inf give 255 in floor, ceil and even at torchao main; amax that `even` rounds to Inf
  // too (torchao-0.18: scaling_mx_versions_test.cpp).
  constexpr TorchaoVersion kMain = TorchaoVersion::kMain;
  for (const E8M0Mode m : {E8M0Mode::kFloor, E8M0Mode::kCeil, E8M0Mode::kEven}) {
    CHECK(mx_scale_code(kNaN, Format::E4M3, m, kMain) == 255);
    CHECK(mx_scale_code(kInf, Format::E4M3, m, kMain) == 255);
  }
  CHECK(mx_scale_code(std::numeric_limits<float>::max(), Format::E4M3, E8M0Mode::kEven, kMain) ==
        255);
  CHECK(mx_scale_code(std::numeric_limits<float>::max(), Format::E4M3, E8M0Mode::kCeil, kMain) ==
        247);
}

TEST_CASE("MX layouts: columnwise runs down 32 rows, 2-D tiles share one scale, edges clip") {
  const std::int64_t rows = 64;
  const std::int64_t cols = 40;  // a partial 8-wide block at the right edge
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      x[static_cast<std::size_t>(r * cols + c)] = static_cast<float>(r + 1) *
                                                  (c % 2 ? -1.0f : 1.0f);
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
  CHECK(col.tensor.code_at(31, 0) ==
        cast_fp32_to_fp8(32.0f * m, Format::E4M3, Overflow::kSatFinite));

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
    const QuantizeResult r = quantize_mx_operand(x, 64, 64, g, o, Format::E4M3, E8M0Mode::kTe,
                                                 TorchaoVersion::kV0_18, weight_2d);
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
