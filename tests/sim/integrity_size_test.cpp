// Size checks at every sim/ entry point that takes rows and cols (sim/element_count.hpp): a
// negative size, a rows * cols that overflows int64, and storage that disagrees with the shape
// are std::invalid_argument naming the function, the sizes and the limit, never a crash. The
// overflow case is the one that used to segfault: rows = 2^62, cols = 4 is 2^64, 0 once wrapped
// to 64 bits, so an empty span passed the old size check and the block walk read 2^62 rows.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/element_count.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/blocked.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/rowwise.hpp"
#include "sim/scaling/stats.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;

namespace {

constexpr std::int64_t kHuge = std::int64_t{1} << 62;  // kHuge * 4 = 2^64

using Quantizer =
    std::function<void(std::span<const float> x, std::int64_t rows, std::int64_t cols)>;

struct EntryPoint {
  const char* name;  // what the message must name
  Quantizer call;
};

std::vector<EntryPoint> quantize_entry_points() {
  const auto E4 = Format::E4M3;
  return {
      {"quantize_current_te", [=](auto x, auto r, auto c) { quantize_current_te(x, r, c, E4); }},
      {"quantize_tensorwise_torchao",
       [=](auto x, auto r, auto c) { quantize_tensorwise_torchao(x, r, c, E4); }},
      {"quantize_per_tensor",
       [=](auto x, auto r, auto c) { quantize_per_tensor("quantize_per_tensor", x, r, c, E4, 1); }},
      {"quantize_axiswise_torchao",
       [=](auto x, auto r, auto c) {
         quantize_axiswise_torchao(x, r, c, ScaleAxis::kRowwise, E4, false);
       }},
      {"quantize_axiswise_torchao",
       [=](auto x, auto r, auto c) {
         quantize_axiswise_torchao(x, r, c, ScaleAxis::kColumnwise, E4, false);
       }},
      {"quantize_block_te", [=](auto x, auto r, auto c) { quantize_block_te(x, r, c, E4); }},
      {"quantize_block_te",
       [=](auto x, auto r, auto c) {
         quantize_block_operand(x, r, c, Gemm::kFprop, Operand::kWeight, E4);
       }},
      {"quantize_mx",
       [=](auto x, auto r, auto c) { quantize_mx(x, r, c, ScaleAxis::kColumnwise, E4); }},
      {"quantize_mx_2d", [=](auto x, auto r, auto c) { quantize_mx_2d(x, r, c, E4); }},
      {"quantize_mx", [=](auto x, auto r, auto c) { quantize_mx_copies(x, r, c, E4); }},
      {"quantize_mx",
       [=](auto x, auto r, auto c) {
         quantize_mx_operand(x, r, c, Gemm::kWgrad, Operand::kInput, E4);
       }},
      {"quantize_tensorwise_torchao",
       [=](auto x, auto r, auto c) {
         quantize_torchao_operand(x, r, c, TorchaoRecipe::kTensorwise, Gemm::kFprop,
                                  Operand::kInput);
       }},
      {"quantize_axiswise_torchao",
       [=](auto x, auto r, auto c) {
         quantize_torchao_operand(x, r, c, TorchaoRecipe::kRowwise, Gemm::kFprop, Operand::kInput);
       }},
      {"DelayedScalingState::quantize",
       [=](auto x, auto r, auto c) {
         DelayedScalingLinear linear(DelayedScalingConfig{});
         linear.quantize_input(x, r, c);
       }},
      {"quantize_blocked_test",
       [=](auto x, auto r, auto c) {
         quantize_blocked("quantize_blocked_test", x, r, c, BlockShape{1, 32}, E4, false,
                          [](float, bool) {
                            return BlockScale{1.0f, 1.0f, 0};
                          });
       }},
  };
}

}  // namespace

TEST_CASE("checked_element_count: the product, or an error naming function, sizes and limit") {
  CHECK(checked_element_count("f", 0, 7) == 0);
  CHECK(checked_element_count("f", 3, 5) == 15);
  CHECK(checked_element_count("f", kMaxElementCount, 1) == kMaxElementCount);
  CHECK(checked_element_count("f", 3, 5, 15, "x.size()") == 15);
  CHECK_THROWS_WITH(checked_element_count("f", kHuge, 4),
                    Catch::Contains("f: rows = 4611686018427387904, cols = 4") &&
                        Catch::Contains("exceeds 9223372036854775807 (int64 max)"));
  // Exactly 2^63 - 1 fits; one more element does not (rows * cols = 2^63).
  CHECK_THROWS_AS(checked_element_count("f", std::int64_t{1} << 31, std::int64_t{1} << 32),
                  std::invalid_argument);
  CHECK_THROWS_WITH(checked_element_count("f", -1, 4),
                    Catch::Contains("rows = -1, cols = 4; sizes must be >= 0"));
  CHECK_THROWS_WITH(checked_element_count("f", 3, 5, 14, "x.size()"),
                    Catch::Contains("f: x.size() = 14 but rows * cols = 3 * 5 = 15"));
  CHECK(ceil_div(kMaxElementCount, 2) == (std::int64_t{1} << 62));
  CHECK(ceil_div(10, 3) == 4);
  CHECK(ceil_div(9, 3) == 3);
}

TEST_CASE("every quantize entry point rejects overflowing, negative and mismatched sizes") {
  const std::vector<float> empty;
  const std::vector<float> six(6, 1.0f);
  for (const auto& entry : quantize_entry_points()) {
    INFO(entry.name);
    // rows * cols = 2^64: wraps to 0 == the empty span's size without the overflow check.
    CHECK_THROWS_WITH(entry.call(empty, kHuge, 4),
                      Catch::Contains(entry.name) && Catch::Contains("int64 max"));
    CHECK_THROWS_WITH(entry.call(empty, 4, kHuge),
                      Catch::Contains(entry.name) && Catch::Contains("int64 max"));
    CHECK_THROWS_WITH(entry.call(six, -2, -3),
                      Catch::Contains(entry.name) && Catch::Contains("rows = -2, cols = -3"));
    CHECK_THROWS_WITH(entry.call(six, 4, 2), Catch::Contains(entry.name) &&
                                                 Catch::Contains("x.size() = 6") &&
                                                 Catch::Contains("4 * 2 = 8"));
    // The same entry point quantizes a well-formed tensor (the checks reject only bad shapes).
    CHECK_NOTHROW(entry.call(six, 2, 3));
  }
}

TEST_CASE("QuantizedTensor readers check its shape before indexing it") {
  QuantizedTensor t;  // a forged tensor: a shape its storage does not have
  t.rows = kHuge;
  t.cols = 4;
  t.block_rows = 1;
  t.block_cols = 1;
  CHECK_THROWS_WITH(dequantize(t), Catch::Contains("dequantize: rows = 4611686018427387904") &&
                                       Catch::Contains("int64 max"));
  CHECK_THROWS_WITH(gemm_shape({t, ReduceDim::kCols}, {t, ReduceDim::kCols}),
                    Catch::Contains("GEMM operand A") && Catch::Contains("int64 max"));

  // Near int64 max, scale_rows() must not overflow in rows + block_rows - 1.
  QuantizedTensor edge;
  edge.rows = kMaxElementCount;
  edge.cols = 1;
  edge.block_rows = 32;
  edge.block_cols = 1;
  CHECK(edge.scale_rows() == kMaxElementCount / 32 + 1);

  QuantizedTensor small =
      quantize_current_te(std::vector<float>(6, 1.0f), 2, 3, Format::E4M3).tensor;
  CHECK_NOTHROW(dequantize(small));
  small.data.pop_back();
  CHECK_THROWS_WITH(dequantize(small), Catch::Contains("data.size() = 5 but rows * cols = 2 * 3"));
  small.data.push_back(0);
  small.block_cols = 0;
  CHECK_THROWS_WITH(gemm_shape({small, ReduceDim::kCols}, {small, ReduceDim::kCols}),
                    Catch::Contains("GEMM operand A: block_rows and block_cols must be >= 1"));
  small.block_cols = 3;
  small.scale_inv.push_back(1.0f);
  CHECK_THROWS_WITH(dequantize(small), Catch::Contains("scale_inv has 2 values"));
}

TEST_CASE("high-precision GEMM checks operand and output sizes before allocating") {
  const std::vector<float> empty;
  const std::vector<float> one(1, 1.0f);
  // A claims 2^40 x 1 but holds one value: A is named, before C (2^40 x 2^40) is sized from it.
  const DenseOperand a{one, std::int64_t{1} << 40, 1, ReduceDim::kCols};
  CHECK_THROWS_WITH(high_precision_gemm(a, a, {}),
                    Catch::Contains("GEMM operand A") &&
                        Catch::Contains("data.size() = 1 but rows * cols"));
  // Well-formed operands with K = 0 (empty data) whose C would be 2^40 x 2^40: rejected before
  // its (wrapped) size is allocated.
  const DenseOperand no_k{empty, std::int64_t{1} << 40, 0, ReduceDim::kCols};
  CHECK_THROWS_WITH(high_precision_gemm(no_k, no_k, {}),
                    Catch::Contains("GEMM output C") && Catch::Contains("int64 max"));
  const DenseOperand huge{empty, kHuge, 4, ReduceDim::kCols};
  const DenseOperand ok{one, 1, 1, ReduceDim::kCols};
  std::vector<float> out(1);
  CHECK_THROWS_WITH(high_precision_gemm_into(huge, ok, {}, out),
                    Catch::Contains("GEMM operand A") && Catch::Contains("int64 max"));
  CHECK_THROWS_WITH(high_precision_gemm_into(ok, {one, -1, 1, ReduceDim::kCols}, {}, out),
                    Catch::Contains("GEMM operand B: rows = -1"));
  std::vector<float> two(2);
  CHECK_THROWS_WITH(high_precision_gemm_into(ok, ok, {}, two),
                    Catch::Contains("out.size() = 2 but rows * cols = 1 * 1 = 1"));
  CHECK_NOTHROW(high_precision_gemm_into(ok, ok, {}, out));
  CHECK(out[0] == 1.0f);
}
