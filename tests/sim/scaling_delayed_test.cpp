// Delayed scaling (sim/scaling/delayed.hpp) against TE's upstream scale-update scenarios
// (TransformerEngine tests/pytorch/test_recipe.py) and the fused kernel's rules
// (te-accelerate.md §2.6), plus the properties issue 4 asks for.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/scaling/delayed.hpp"
#include "tests/sim/float_bits.hpp"

using namespace fp8lab::sim;
using namespace fp8lab::sim::scaling;
using namespace fp8lab::testing;

namespace {

// torch.testing.assert_close defaults for float32: rtol 1.3e-6, atol 1e-5.
bool close_torch_f32(double actual, double expected) {
  return std::fabs(actual - expected) <= 1e-5 + 1.3e-6 * std::fabs(expected);
}

std::vector<float> filled(std::size_t n, float v) { return std::vector<float>(n, v); }

// One training step of a Linear on constant tensors, in TE's order (te-accelerate.md §2.5).
void train_step(DelayedScalingLinear& layer, float x, float w, float dy) {
  const auto xs = filled(16 * 16, x);
  const auto ws = filled(16 * 16, w);
  const auto dys = filled(16 * 16, dy);
  layer.quantize_input(xs, 16, 16);
  layer.quantize_weight(ws, 16, 16);
  layer.end_of_forward();
  layer.quantize_grad_output(dys, 16, 16);
  layer.end_of_backward();
}

// A two-slot E4M3 state (history of `history_len` rows) with one amax recorded per slot.
DelayedScalingState two_slots(std::int64_t history_len, float amax0, float amax1) {
  DelayedScalingConfig config;
  config.amax_history_len = history_len;
  DelayedScalingState state(2, Format::E4M3, config);
  state.record_amax(0, amax0);
  state.record_amax(1, amax1);
  return state;
}

}  // namespace

// test_recipe.py::test_scale_update_numeric_scenarios (fused path): a [1, 1] history holding one
// amax, scale 1.0, recipe defaults (algo max, margin 0); the fused update is called with the
// reduction buffer = a copy of the history. Upstream expectations:
//   "zero" -> 1.0   "inf" -> 1.0   "nan" -> 1.0
//   "tiny": amax = (fp8_max / fp32_max) / 2 -> fp32_max      "normal": amax -> fp8_max / amax
TEST_CASE("TE test_scale_update_numeric_scenarios: zero, tiny, normal, inf, nan") {
  for (const float fp8_max : {448.0f, 57344.0f}) {  // E4M3 (max_fwd), E5M2 (HYBRID max_bwd)
    const float tiny_amax = fp8_max / kFltMax;      // torch fp32 tensor division
    struct Case {
      const char* name;
      float amax;
      float expected_scale;
    };
    const Case cases[] = {
        {"zero", 0.0f, 1.0f},
        {"tiny", tiny_amax / 2.0f, kFltMax},
        {"normal", 0.5f + 1e-5f, fp8_max / (0.5f + 1e-5f)},
        {"normal", 0.987654f + 1e-5f, fp8_max / (0.987654f + 1e-5f)},
        {"inf", kInf, 1.0f},
        {"nan", kNaN, 1.0f},
    };
    for (const Case& c : cases) {
      std::vector<float> history = {c.amax};
      std::vector<float> scale = {1.0f};
      const std::vector<float> reduced = history;  // amax_history.clone().view(-1)
      fused_amax_and_scale_update(history, 1, scale, reduced, AmaxComputeAlgo::kMax,
                                  delayed_scaled_max(fp8_max, 0), true);
      INFO(c.name << " fp8_max " << fp8_max << " amax " << c.amax << " scale " << scale[0]
                  << " bits 0x" << std::hex << bits(scale[0]) << " expected 0x"
                  << bits(c.expected_scale));
      CHECK(bits(scale[0]) == bits(c.expected_scale));
      CHECK(bits(1.0f / scale[0]) == bits(1.0f / c.expected_scale));  // scale_inv
    }
  }
}

// test_recipe.py::test_fp8_scale_update_with_linear_fuser_op with margin 2 (te-accelerate.md §2.8):
// x, w, dy filled with step + 0.25, + 0.5, + 0.75; after each step the history tail equals the
// chronological amaxes exactly (atol = rtol = 0) and scale = (max_val / ref_amax) / 2**margin
// with max_val 448 (forward) and 57344 (backward), compared with assert_close's float32 defaults.
TEST_CASE("TE test_fp8_scale_update_with_linear_fuser_op: history tails and scales, margin 2") {
  for (const AmaxComputeAlgo algo : {AmaxComputeAlgo::kMax, AmaxComputeAlgo::kMostRecent}) {
    DelayedScalingConfig config;
    config.margin = 2;
    config.amax_history_len = 1024;
    config.amax_compute_algo = algo;
    DelayedScalingLinear layer(config);
    std::vector<double> xh, wh, dyh;
    for (int step = 0; step < 4; ++step) {
      xh.push_back(step + 0.25);
      wh.push_back(step + 0.5);
      dyh.push_back(step + 0.75);
      train_step(layer, static_cast<float>(xh.back()), static_cast<float>(wh.back()),
                 static_cast<float>(dyh.back()));

      auto check = [&](const DelayedScalingState& state, std::int64_t slot,
                       const std::vector<double>& ref, double max_val) {
        const std::vector<float> column = state.history_of(slot);
        INFO(to_string(algo) << " step " << step << " slot " << slot);
        for (int k = 0; k <= step; ++k) {  // test_amax_history[-(step+1):] == ref[:(step+1)]
          CHECK(
              static_cast<double>(column[column.size() - 1 - static_cast<std::size_t>(step - k)]) ==
              ref[static_cast<std::size_t>(k)]);
        }
        const double ref_amax =
            algo == AmaxComputeAlgo::kMax ? *std::max_element(ref.begin(), ref.end()) : ref.back();
        const double ref_scale = (max_val / ref_amax) / 4.0;
        const float scale = state.scale(slot);
        CHECK(close_torch_f32(scale, ref_scale));
        CHECK(close_torch_f32(1.0f / scale, 1.0 / ref_scale));
        // docs/numerics.md §2.1 exactly: RN(RN(fp8_max * 2^-margin) / amax).
        const float exact = static_cast<float>(max_val / 4.0) / static_cast<float>(ref_amax);
        CHECK(bits(scale) == bits(exact));
      };
      check(layer.forward(), DelayedScalingLinear::kInput, xh, 448.0);
      check(layer.forward(), DelayedScalingLinear::kWeight, wh, 448.0);
      check(layer.backward(), DelayedScalingLinear::kGradOutput, dyh, 57344.0);
    }
  }
}

// test_recipe.py::test_fp8_scale_update_with_linear_module: a history tweaked to random values in
// [0.5, 2.5) (row 1 of slot 0 set to 3 when len > 1) and random scales, then a step on zero
// tensors (amax 0 leaves row 0 as it is) and the update. Upstream reference: history = roll(-1)
// with row 0 zeroed; amax = max over the whole pre-roll history (max) or row 0 (most_recent);
// scale = (max_fwd / amax) / 2**margin, margin 2; HYBRID (forward 448 over 3 slots, backward
// 57344 over 2 slots).
TEST_CASE("TE test_fp8_scale_update_with_linear_module: roll and scale from a random history") {
  std::mt19937 gen(1234);  // upstream seed
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (const std::int64_t len : {1, 31, 1024}) {
    for (const AmaxComputeAlgo algo : {AmaxComputeAlgo::kMax, AmaxComputeAlgo::kMostRecent}) {
      for (const auto& [slots, max_val] : {std::pair<std::int64_t, float>{3, 448.0f},
                                           std::pair<std::int64_t, float>{2, 57344.0f}}) {
        std::vector<float> history(static_cast<std::size_t>(len * slots));
        for (float& h : history) h = 2.0f * dist(gen) + 0.5f;
        if (len > 1 && max_val == 448.0f) history[static_cast<std::size_t>(1 * slots + 0)] = 3.0f;
        std::vector<float> scale(static_cast<std::size_t>(slots));
        for (float& s : scale) s = 2.0f * dist(gen) + 0.5f;
        const std::vector<float> before = history;

        fused_amax_and_scale_update(history, len, scale, {}, algo, delayed_scaled_max(max_val, 2),
                                    true);

        for (std::int64_t j = 0; j < slots; ++j) {
          INFO("len " << len << " algo " << to_string(algo) << " slots " << slots << " j " << j);
          double ref_amax = before[static_cast<std::size_t>(j)];
          for (std::int64_t i = 0; i < len; ++i) {
            if (algo == AmaxComputeAlgo::kMax) {
              ref_amax = std::max(
                  ref_amax, static_cast<double>(before[static_cast<std::size_t>(i * slots + j)]));
            }
            // torch.roll(H, -1, 0) then row 0 zeroed
            const float expected =
                i == 0 ? 0.0f : before[static_cast<std::size_t>(((i + 1) % len) * slots + j)];
            CHECK(history[static_cast<std::size_t>(i * slots + j)] == expected);
          }
          const double ref_scale = (static_cast<double>(max_val) / ref_amax) / 4.0;
          CHECK(close_torch_f32(scale[static_cast<std::size_t>(j)], ref_scale));
        }
      }
    }
  }
}

// te-accelerate.md §2.5.4: no warm-up; the first casts use scale 1.0 and the scale computed at the
// end of step t is used from step t + 1.
TEST_CASE("Delayed: step 0 casts with 1.0, an update applies from the next cast") {
  DelayedScalingConfig config;
  DelayedScalingLinear layer(config);
  const auto x = filled(64, 2.0f);
  const QuantizeResult first = layer.quantize_input(x, 8, 8);
  CHECK(first.tensor.scale == std::vector<float>{1.0f});
  CHECK(first.tensor.scale_inv == std::vector<float>{1.0f});
  CHECK(first.tensor.data[0] == 0x40);  // 2.0 in E4M3
  layer.end_of_forward();
  const QuantizeResult second = layer.quantize_input(x, 8, 8);
  CHECK(second.tensor.scale == std::vector<float>{224.0f});  // 448 / 2
  CHECK(second.tensor.data[0] == 0x7E);                      // 448
  // The weight slot was never cast: amax 0, so it neither rolled nor changed its scale.
  CHECK(layer.forward().scale(DelayedScalingLinear::kWeight) == 1.0f);
  for (float h : layer.forward().history_of(DelayedScalingLinear::kWeight)) CHECK(h == 0.0f);
  // The backward pass has its own format and state: HYBRID grad_output is E5M2.
  CHECK(layer.backward().format() == Format::E5M2);
  CHECK(layer.backward().scale(DelayedScalingLinear::kGradOutput) == 1.0f);
}

// §2.6 "amax == 0: no roll, no scale change" (TE a81786845, "Avoid amax roll for non-run
// modules"; test_fp8_scale_update_with_linear_module: the weight is not rolled when it was not
// re-cast, is_first_microbatch=False).
TEST_CASE("Delayed: a step without a cast (amax 0) neither rolls the history nor moves the scale") {
  DelayedScalingState state = two_slots(4, 2.0f, 8.0f);
  state.update();
  REQUIRE(state.history_of(0) == std::vector<float>{0.0f, 0.0f, 0.0f, 2.0f});
  state.record_amax(0, 4.0f);  // slot 1 is not cast this step
  state.update();
  CHECK(state.history_of(0) == std::vector<float>{0.0f, 0.0f, 2.0f, 4.0f});
  CHECK(state.history_of(1) == std::vector<float>{0.0f, 0.0f, 0.0f, 8.0f});
  CHECK(state.scale(0) == 112.0f);  // 448 / 4
  CHECK(state.scale(1) == 56.0f);   // still 448 / 8
}

// §2.4: every cast of a slot max-merges its amax into row 0 until the update zeroes it; §1.3: an
// FP8 eval pass under no_grad casts without an update, so its amax lands in the next step's row 0.
TEST_CASE("Delayed: casts of one slot accumulate into row 0 until the update") {
  DelayedScalingConfig config;
  config.amax_history_len = 2;
  DelayedScalingLinear layer(config);
  const auto small = filled(4, 2.0f);
  const auto large = filled(4, 7.0f);
  layer.quantize_input(large, 2, 2);  // eval-style cast: no update follows
  layer.quantize_input(small, 2, 2);  // the training step's cast
  CHECK(layer.forward().history(0, DelayedScalingLinear::kInput) == 7.0f);
  layer.end_of_forward();
  CHECK(layer.forward().history(0, DelayedScalingLinear::kInput) == 0.0f);
  CHECK(layer.forward().history(1, DelayedScalingLinear::kInput) == 7.0f);
  CHECK(layer.forward().scale(DelayedScalingLinear::kInput) == 64.0f);  // 448 / 7
}

// §2.6: `max` is taken over the len most recent step amaxes, including the one the roll drops.
TEST_CASE("Delayed: max covers the len most recent amaxes, the window keeps len - 1") {
  DelayedScalingConfig config;
  config.amax_history_len = 3;
  config.fp8_format = Fp8Format::kE4M3;
  DelayedScalingState state(1, Format::E4M3, config);
  for (const float a : {8.0f, 4.0f, 2.0f, 1.0f}) {
    state.record_amax(0, a);
    state.update();
  }
  // Steps 1..3 saw 4, 2, 1; the update at step 3 read {4, 2, 1} and dropped 4.
  CHECK(state.scale(0) == 112.0f);  // 448 / 4
  CHECK(state.history_of(0) == std::vector<float>{0.0f, 2.0f, 1.0f});
  state.record_amax(0, 0.5f);
  state.update();
  CHECK(state.scale(0) == 224.0f);  // 448 / max{2, 1, 0.5}
}

TEST_CASE("Delayed: NaN and Inf amaxes follow fmaxf and keep the scale (te-accelerate.md §2.6)") {
  DelayedScalingConfig config;
  config.amax_history_len = 3;
  SECTION("NaN with max: stored, ignored by fmaxf") {
    DelayedScalingState state(1, Format::E4M3, config);
    state.record_amax(0, 2.0f);
    state.update();
    REQUIRE(state.scale(0) == 224.0f);
    std::vector<float> h = {kNaN, 0.0f, 2.0f};  // row 0 = NaN this step
    std::vector<float> s = {224.0f};
    fused_amax_and_scale_update(h, 3, s, {}, AmaxComputeAlgo::kMax, 448.0f, true);
    CHECK(std::isnan(h[2]));
    CHECK(h[1] == 2.0f);
    CHECK(s[0] == 224.0f);  // from the remaining 2.0
  }
  SECTION("NaN with most_recent keeps the scale") {
    std::vector<float> h = {kNaN, 0.0f, 2.0f};
    std::vector<float> s = {5.0f};
    fused_amax_and_scale_update(h, 3, s, {}, AmaxComputeAlgo::kMostRecent, 448.0f, true);
    CHECK(s[0] == 5.0f);
  }
  SECTION("Inf keeps the scale while it is in the window") {
    DelayedScalingState state(1, Format::E4M3, config);
    state.record_amax(0, 2.0f);
    state.update();
    state.record_amax(0, kInf);
    state.update();
    CHECK(state.scale(0) == 224.0f);  // max = Inf: kept
    state.record_amax(0, 1.0f);
    state.update();
    CHECK(state.scale(0) == 224.0f);  // Inf still among the 3 most recent
    state.record_amax(0, 1.0f);
    state.update();
    CHECK(state.scale(0) == 224.0f);  // window {Inf, 1, 1}: still Inf
    state.record_amax(0, 1.0f);
    state.update();
    CHECK(state.scale(0) == 448.0f);  // {1, 1, 1}
  }
}

TEST_CASE("Delayed property: history length 1 makes max and most_recent identical") {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> mag(-20.0f, 20.0f);
  DelayedScalingConfig a_config;
  a_config.amax_history_len = 1;
  a_config.amax_compute_algo = AmaxComputeAlgo::kMax;
  DelayedScalingConfig b_config = a_config;
  b_config.amax_compute_algo = AmaxComputeAlgo::kMostRecent;
  DelayedScalingState a(1, Format::E5M2, a_config);
  DelayedScalingState b(1, Format::E5M2, b_config);
  for (int step = 0; step < 200; ++step) {
    const float amax = step % 17 == 5 ? 0.0f : std::exp2(mag(gen));
    a.record_amax(0, amax);
    b.record_amax(0, amax);
    a.update();
    b.update();
    INFO("step " << step << " amax " << amax);
    REQUIRE(bits(a.scale(0)) == bits(b.scale(0)));
    REQUIRE(a.history_of(0) == b.history_of(0));
  }
}

TEST_CASE("Delayed property: interval k recomputes the scale only every k steps") {
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> amax_dist(0.1f, 100.0f);
  for (const std::int64_t k : {2, 3, 5}) {
    DelayedScalingConfig every;
    every.amax_history_len = 4;
    DelayedScalingConfig sparse = every;
    sparse.interval = k;
    DelayedScalingState reference(1, Format::E4M3, every);
    DelayedScalingState state(1, Format::E4M3, sparse);
    float previous = state.scale(0);
    for (std::int64_t step = 0; step < 40; ++step) {
      const float amax = amax_dist(gen);
      reference.record_amax(0, amax);
      state.record_amax(0, amax);
      reference.update();
      state.update();
      INFO("interval " << k << " step " << step);
      REQUIRE(state.history_of(0) == reference.history_of(0));  // the history rolls every step
      if (step % k == 0) {
        REQUIRE(bits(state.scale(0)) == bits(reference.scale(0)));
      } else {
        REQUIRE(bits(state.scale(0)) == bits(previous));
      }
      previous = state.scale(0);
    }
  }
}

// §2.7: the reduced row 0 (MAX over ranks) feeds the update; a slot whose reduced amax is 0 uses
// its local row 0.
TEST_CASE("Delayed: distributed amax reduction is a MAX before the update") {
  DelayedScalingState state = two_slots(2, 2.0f, 1.0f);
  const std::vector<float> other_rank = {8.0f, 0.0f};
  state.update([&](std::span<float> amaxes) {
    REQUIRE(amaxes.size() == 2);
    for (std::size_t j = 0; j < amaxes.size(); ++j) amaxes[j] = std::fmax(amaxes[j], other_rank[j]);
  });
  CHECK(state.scale(0) == 56.0f);   // 448 / 8 (reduced)
  CHECK(state.scale(1) == 448.0f);  // 448 / 1 (local)
  CHECK(state.history(1, 0) == 8.0f);

  // Reduced 0 for a slot and local 0 too: no roll.
  DelayedScalingConfig config;
  config.amax_history_len = 2;
  DelayedScalingState idle(1, Format::E4M3, config);
  idle.update([](std::span<float> amaxes) { amaxes[0] = 0.0f; });
  CHECK(idle.history_of(0) == std::vector<float>{0.0f, 0.0f});
  CHECK(idle.scale(0) == 1.0f);
}

TEST_CASE("Delayed: formats, margin and bad configuration") {
  CHECK(forward_format(Fp8Format::kHybrid) == Format::E4M3);
  CHECK(backward_format(Fp8Format::kHybrid) == Format::E5M2);
  CHECK(forward_format(Fp8Format::kE4M3) == Format::E4M3);
  CHECK(backward_format(Fp8Format::kE4M3) == Format::E4M3);
  CHECK(forward_format(Fp8Format::kE5M2) == Format::E5M2);
  CHECK(backward_format(Fp8Format::kE5M2) == Format::E5M2);
  CHECK(delayed_scaled_max(448.0f, 0) == 448.0f);
  CHECK(delayed_scaled_max(448.0f, 3) == 56.0f);
  CHECK(delayed_scaled_max(57344.0f, 1) == 28672.0f);

  DelayedScalingConfig bad;
  bad.amax_history_len = 0;
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("amax_history_len = 0"));
  bad.amax_history_len = 4;
  bad.interval = 0;
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("interval = 0"));
  DelayedScalingState state(2, Format::E4M3, DelayedScalingConfig{});
  CHECK_THROWS_WITH(state.scale(2), Catch::Contains("slot = 2"));
}
