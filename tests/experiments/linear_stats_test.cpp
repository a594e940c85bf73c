// The FP8 Linear's per-operand statistics (experiments/linear/linear_stats.hpp) against the sim
// layer's definition, sim::scaling::tensor_stats, on every blocked layout a Linear produces
// (per-tensor, rowwise/columnwise, 1x128 / 128x1 / 128x128 with partial edge blocks, MX 1x32 /
// 32x1), with NaN, Inf, zeros, saturation and underflow in the input; and the merge rules.
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/linear_stats.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {

TEST_CASE("measure_quantization agrees with sim::scaling::tensor_stats", "[linear][stats]") {
  const auto scaling = GENERATE(recipes::Scaling::delayed, recipes::Scaling::current,
                                recipes::Scaling::rowwise, recipes::Scaling::block,
                                recipes::Scaling::mxfp8);
  const auto tensor = GENERATE(Operand::kInput, Operand::kWeight);
  const auto role = GENERATE(Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad);
  if ((tensor == Operand::kInput && role == Gemm::kDgrad) ||
      (tensor == Operand::kWeight && role == Gemm::kWgrad)) {
    return;  // not an operand of that GEMM
  }
  INFO(recipes::name(scaling) << " " << name(tensor) << " for " << name(role));
  SimBackend backend;
  auto state = backend.make_state(test::fp32_seq_recipe(scaling));
  constexpr std::int64_t rows = 150, cols = 70;  // partial blocks of 32 and 128
  torch::Tensor x = test::normal({rows, cols}, 5, 4.0);
  x.index_put_({3, 5}, std::numeric_limits<float>::quiet_NaN());
  x.index_put_({7, 1}, std::numeric_limits<float>::infinity());
  x.index_put_({9, 9}, 0.0f);
  x.index_put_({11, 2}, 1e-30f);  // underflows
  x.index_put_({140, 60}, 1e6f);  // saturates with delayed scale 1
  std::span<const float> values(x.const_data_ptr<float>(), static_cast<std::size_t>(x.numel()));
  const auto result = backend.quantize(*state, tensor, role, {values, rows, cols});
  const OperandStats mine = measure_quantization({values, rows, cols}, result);
  const sim::scaling::TensorStats reference = sim::scaling::tensor_stats(values, result);
  CHECK(mine.quantizations == 1);
  CHECK(mine.amax == reference.amax);
  CHECK(mine.scale_min == reference.scale_min);
  CHECK(mine.scale_max == reference.scale_max);
  CHECK(mine.count == reference.count);
  CHECK(mine.saturated == reference.saturated);
  CHECK(mine.underflowed == reference.underflowed);
  CHECK(mine.nan == reference.nan);
  CHECK(mine.underflowed > 0);
  CHECK(mine.sqnr_db() == reference.sqnr_db);  // the same sums in the same order
  CHECK(std::isfinite(mine.sqnr_db()));
}

TEST_CASE("OperandStats merge: fmax amax, scale range, added counts and energies",
          "[linear][stats]") {
  OperandStats a, b;
  a.quantizations = 1;
  a.amax = 2.0f;
  a.scale_min = a.scale_max = 4.0f;
  a.count = 10;
  a.saturated = 1;
  a.sqnr_elements = 10;
  a.signal_energy = 100.0;
  a.noise_energy = 1.0;
  b = a;
  b.amax = std::numeric_limits<float>::quiet_NaN();
  b.scale_min = 0.5f;
  b.scale_max = 0.5f;
  b.noise_energy = 9.0;
  OperandStats merged;
  CHECK(std::isnan(merged.sqnr_db()));
  merged.merge(a);
  CHECK(merged.sqnr_db() == 20.0);
  merged.merge(b);
  CHECK(merged.quantizations == 2);
  CHECK(merged.amax == 2.0f);  // NaN dropped, as fmaxf
  CHECK(merged.scale_min == 0.5f);
  CHECK(merged.scale_max == 4.0f);
  CHECK(merged.count == 20);
  CHECK(merged.saturated == 2);
  CHECK(merged.sqnr_db() == Approx(10.0 * std::log10(200.0 / 10.0)).epsilon(1e-15));
}

TEST_CASE("set_measure_operands(false) keeps GEMM counts and timers, measures no operand",
          "[linear][stats]") {
  Fp8Linear fc(test::normal({32, 64}, 1, 0.1).requires_grad_(true), torch::Tensor(),
               test::fp32_seq_recipe(recipes::Scaling::current),
               std::make_shared<const SimBackend>(), HighPrecision::fp32);
  const torch::Tensor x = test::normal({16, 64}, 2).requires_grad_(true);
  const auto step = [&] {
    torch::Tensor y;
    {
      Fp8Autocast fp8(true);
      y = fc->forward(x);
    }
    y.sum().backward();
  };
  const auto quantizations = [&] {
    std::uint64_t n = 0;
    for (const auto& per_tensor : fc->stats().operands) {
      for (const OperandStats& op : per_tensor) n += op.quantizations;
    }
    return n;
  };
  fc->set_measure_operands(false);
  step();
  CHECK(fc->stats().fp8_gemms == std::array<std::uint64_t, 3>{1, 1, 1});
  CHECK(fc->stats().quantize_seconds > 0.0);
  CHECK(quantizations() == 0);
  fc->set_measure_operands(true);
  step();
  // x and W for fprop, their dgrad / wgrad copies, dY for dgrad and wgrad.
  CHECK(quantizations() == 6);
  CHECK(fc->stats().operand(Operand::kInput, Gemm::kFprop).count == 16 * 64);
}

TEST_CASE("static scaling: a Linear counts what its fixed scale saturates and flushes",
          "[linear][stats]") {
  // scaling static, static_scale 1 (HYBRID: E4M3 forward): the input's 3 entries of 1000 are
  // above E4M3's 448 (saturated) and its 5 entries of 1e-6 below half its smallest subnormal,
  // 2^-10 (underflowed); the weight, N(0, 0.1), saturates nothing. The scale is 1 throughout.
  recipes::Recipe recipe = test::fp32_seq_recipe(recipes::Scaling::static_);
  Fp8Linear fc(test::normal({32, 64}, 1, 0.1).requires_grad_(true), torch::Tensor(), recipe,
               std::make_shared<const SimBackend>(), HighPrecision::fp32);
  torch::Tensor x = test::normal({16, 64}, 2);
  x = x.sign() * (x.abs() + 0.01);  // |x| >= 0.01 elsewhere: no underflow of its own
  x.view(-1).slice(0, 0, 3).fill_(1000.0f);
  x.view(-1).slice(0, 10, 15).fill_(1e-6f);
  x.requires_grad_(true);
  torch::Tensor y;
  {
    Fp8Autocast fp8(true);
    y = fc->forward(x);
  }
  y.sum().backward();
  const OperandStats& input = fc->stats().operand(Operand::kInput, Gemm::kFprop);
  CHECK(input.count == 16 * 64);
  CHECK(input.saturated == 3);
  CHECK(input.underflowed == 5);
  CHECK(input.amax == 1000.0f);
  CHECK(input.scale_min == 1.0f);
  CHECK(input.scale_max == 1.0f);
  const OperandStats& weight = fc->stats().operand(Operand::kWeight, Gemm::kFprop);
  CHECK(weight.saturated == 0);
  CHECK(weight.scale_inv_max == 1.0f);
  // A fixed scale of 2^-4 moves 1000 into range (62.5) and flushes more of the small entries.
  recipe.static_scale = 0.0625;
  Fp8Linear scaled(test::normal({32, 64}, 1, 0.1).requires_grad_(true), torch::Tensor(), recipe,
                   std::make_shared<const SimBackend>(), HighPrecision::fp32);
  {
    Fp8Autocast fp8(true);
    scaled->forward(x.detach());
  }
  const OperandStats& input2 = scaled->stats().operand(Operand::kInput, Gemm::kFprop);
  CHECK(input2.saturated == 0);
  CHECK(input2.underflowed >= 5);
  CHECK(input2.scale_max == 0.0625f);
}

TEST_CASE("a Linear's statistics are each quantization's own, also where a tensor's second "
          "quantization takes the first one's sums",
          "[linear][stats]") {
  // x, W and dY are each quantized twice in a step (x: fprop and wgrad; W: fprop and dgrad; dY:
  // dgrad and wgrad). Where the two quantizations give the same codes, scales and layout
  // (per-tensor current scaling) the Linear takes the second one's sums from the first walk;
  // where they differ (MX 1x32 against 32x1, 1x128 against 128x1) it walks again. Each pair's
  // statistics must equal an independent measurement of that quantization, bit for bit.
  const auto scaling = GENERATE(recipes::Scaling::current, recipes::Scaling::mxfp8,
                                recipes::Scaling::block, recipes::Scaling::rowwise);
  INFO(recipes::name(scaling));
  const recipes::Recipe recipe = test::fp32_seq_recipe(scaling);
  const auto backend = std::make_shared<const SimBackend>();
  const torch::Tensor w = test::normal({48, 96}, 1, 0.1);
  Fp8Linear fc(w.clone().requires_grad_(true), torch::Tensor(), recipe, backend,
               HighPrecision::fp32);
  const torch::Tensor x = test::normal({40, 96}, 2).requires_grad_(true);
  const torch::Tensor dy = test::normal({40, 48}, 3, 0.01);
  torch::Tensor y;
  {
    Fp8Autocast fp8(true);
    y = fc->forward(x);
  }
  y.backward(dy);
  const auto measured = [&](Operand tensor, Gemm role, const torch::Tensor& t) {
    auto state = backend->make_state(recipe);
    const torch::Tensor c = t.detach().contiguous();
    const ConstMatrix view{{c.const_data_ptr<float>(), static_cast<std::size_t>(c.numel())},
                           c.size(0),
                           c.size(1)};
    return measure_quantization(view, backend->quantize(*state, tensor, role, view));
  };
  const auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  struct Pair {
    Operand tensor;
    Gemm first, second;
    torch::Tensor values;
  };
  for (const Pair& p : {Pair{Operand::kInput, Gemm::kFprop, Gemm::kWgrad, x},
                        Pair{Operand::kWeight, Gemm::kFprop, Gemm::kDgrad, w},
                        Pair{Operand::kGradOutput, Gemm::kDgrad, Gemm::kWgrad, dy}}) {
    std::array<OperandStats, 2> kept{};
    std::size_t i = 0;
    for (const Gemm role : {p.first, p.second}) {
      INFO(name(p.tensor) << " for " << name(role));
      const OperandStats& mine = fc->stats().operand(p.tensor, role);
      const OperandStats reference = measured(p.tensor, role, p.values);
      REQUIRE(mine.quantizations == 1);
      CHECK(mine.sqnr_elements == reference.sqnr_elements);
      CHECK(same_bits(mine.signal_energy, reference.signal_energy));
      CHECK(same_bits(mine.noise_energy, reference.noise_energy));
      CHECK(mine.moments.elements == reference.moments.elements);
      CHECK(same_bits(mine.moments.s1, reference.moments.s1));
      CHECK(same_bits(mine.moments.s4, reference.moments.s4));
      CHECK(same_bits(mine.max_block_dynamic_range_log2, reference.max_block_dynamic_range_log2));
      CHECK(mine.amax == reference.amax);
      kept[i++] = mine;
    }
    // Not vacuous: per-tensor scaling gives both copies the same sums (the reused path); the
    // blocked layouts give the input's two copies different block ranges (a reuse there would be
    // wrong; their noise sums can agree: power-of-2 scales leave E4M3's relative errors as they
    // are).
    const bool same_noise = same_bits(kept[0].noise_energy, kept[1].noise_energy);
    const bool same_range = kept[0].max_block_dynamic_range_log2 ==
                            kept[1].max_block_dynamic_range_log2;
    if (scaling == recipes::Scaling::current) CHECK((same_noise && same_range));
    if (scaling != recipes::Scaling::current && p.tensor == Operand::kInput) CHECK(!same_range);
  }
}

}  // namespace fp8lab::experiments
