// The shadow check (experiments/fp8/shadow_check.hpp) finds what it must: it watches a backend
// that is the sim backend except for one deliberately corrupted value (a code byte of one
// quantize, one GEMM output, one amax-history entry) and must report exactly that one mismatch,
// with its layer, tensor and kind; the same run without corruption reports 0 mismatches over a
// non-zero number of comparisons. Needs no GPU: the watched backend is SimBackend plus the fault.
// Also: the --backend / --shadow-every choice (cuda_backend.hpp) is checked by name.
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <memory>
#include <vector>

#include "cuda_backend_test_support.hpp"
#include "experiments/fp8/autocast.hpp"
#include "experiments/fp8/cuda_backend.hpp"
#include "experiments/fp8/fp8_linear.hpp"
#include "experiments/fp8/shadow_check.hpp"
#include "experiments/fp8/sim_backend.hpp"

namespace fp8lab::experiments {
namespace {

enum class Fault { none, code_byte, gemm_output, history_entry };

// SimBackend with one fault injected on the `at`-th call of its kind (counted from 0).
class FaultyBackend final : public LinearBackend {
 public:
  FaultyBackend(Fault fault, int at) : fault_(fault), at_(at) {}
  std::string_view name() const override { return "faulty"; }
  std::unique_ptr<LinearScalingState> make_state(const recipes::Recipe& r) const override {
    return sim_.make_state(r);
  }
  sim::scaling::QuantizeResult quantize(LinearScalingState& state, LinearTensor tensor,
                                        GemmRole role, ConstMatrix x) const override {
    auto result = sim_.quantize(state, tensor, role, x);
    if (fault_ == Fault::code_byte && quantizes_++ == at_) result.tensor.data[5] ^= 0x01;
    return result;
  }
  void gemm(GemmRole role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
            recipes::Accumulation accumulation, MutableMatrix out) const override {
    sim_.gemm(role, a, b, accumulation, out);
    if (fault_ == Fault::gemm_output && gemms_++ == at_) out.data[3] = std::nextafter(out.data[3], 1e30f);
  }
  void high_precision_gemm(GemmRole role, ConstMatrix a, ConstMatrix b, HighPrecision precision,
                           MutableMatrix out) const override {
    sim_.high_precision_gemm(role, a, b, precision, out);
  }
  void end_forward(LinearScalingState& state) const override { sim_.end_forward(state); }
  void end_backward(LinearScalingState& state) const override {
    sim_.end_backward(state);
    // The snapshot the shadow check reads afterwards shows one history entry off by one ulp.
    if (fault_ == Fault::history_entry && updates_++ == at_) corrupt_history_ = true;
  }
  DelayedStateSnapshot snapshot(const LinearScalingState& state) const {
    DelayedStateSnapshot snap = test::sim_delayed_snapshot(state);
    if (corrupt_history_ && !snap.backward_history.empty()) {
      snap.backward_history.back() = std::nextafter(snap.backward_history.back(), 1e30f);
      corrupt_history_ = false;
    }
    return snap;
  }

 private:
  SimBackend sim_;
  Fault fault_;
  int at_;
  mutable int quantizes_ = 0, gemms_ = 0, updates_ = 0;
  mutable bool corrupt_history_ = false;
};

recipes::Recipe recipe_of(recipes::Scaling scaling) {
  recipes::Recipe r = test::recipe_with_defaults(scaling);
  r.amax_history_len = 4;
  return r;
}

// Three training steps of a two-layer stack through `backend`.
ShadowReport train_three_steps(const std::shared_ptr<FaultyBackend>& faulty,
                               recipes::Scaling scaling, std::int64_t every) {
  auto shadowed = std::make_shared<const ShadowCheckedBackend>(
      faulty, [faulty](const LinearScalingState& s) { return faulty->snapshot(s); },
      ShadowOptions{.every = every});
  const recipes::Recipe r = recipe_of(scaling);
  Fp8LinearImpl first(test::normal({64, 96}, 1, 0.1).requires_grad_(true),
                      torch::zeros({64}).requires_grad_(true), r, shadowed, HighPrecision::fp32);
  Fp8LinearImpl second(test::normal({32, 64}, 2, 0.1).requires_grad_(true), torch::Tensor(), r,
                       shadowed, HighPrecision::fp32);
  for (int step = 0; step < 3; ++step) {
    const torch::Tensor x = test::normal({48, 96}, 10 + static_cast<std::uint64_t>(step));
    torch::Tensor y;
    {
      Fp8Autocast fp8(true);
      y = second.forward(first.forward(x));
    }
    y.backward(test::normal({48, 32}, 20 + static_cast<std::uint64_t>(step)));
  }
  return shadowed->report();
}

std::string describe(const ShadowReport& report) { return to_json(report).dump(1); }

}  // namespace

TEST_CASE("Shadow check: sim watched by sim reports 0 mismatches over every call",
          "[shadow]") {
  const auto scaling = GENERATE(recipes::Scaling::delayed, recipes::Scaling::mxfp8,
                                recipes::Scaling::block, recipes::Scaling::rowwise_with_gw_hp);
  INFO("scaling " << recipes::name(scaling));
  const ShadowReport report =
      train_three_steps(std::make_shared<FaultyBackend>(Fault::none, 0), scaling, 1);
  INFO(describe(report));
  CHECK(report.mismatches == 0);
  // Every call of 3 steps is replayed: at least 11 per step (rowwise_with_gw_hp: 6 quantizes,
  // 5 GEMMs), each with many values.
  CHECK(report.operations >= 3 * 11);
  CHECK(report.compared > 2 * 3 * (48 * 96 + 48 * 64));
}

TEST_CASE("Shadow check: one corrupted code byte is exactly one mismatch", "[shadow]") {
  const auto scaling = GENERATE(recipes::Scaling::delayed, recipes::Scaling::mxfp8);
  INFO("scaling " << recipes::name(scaling));
  // Quantize call 15 is in step 1: each step quantizes 10 times (the first layer's input needs no
  // gradient, so it has no dgrad: 3 + 1 casts; the second layer 4 + 2).
  const ShadowReport report =
      train_three_steps(std::make_shared<FaultyBackend>(Fault::code_byte, 15), scaling, 1);
  INFO(describe(report));
  REQUIRE(report.mismatches == 1);
  REQUIRE(report.by_key.size() == 1);
  const std::string key = report.by_key.begin()->first;
  CHECK(key.ends_with("|code"));
  CHECK(key.starts_with("linear#"));
  REQUIRE(report.first.size() == 1);
  CHECK(report.first[0].find("code[5]: faulty 0x") != std::string::npos);
}

TEST_CASE("Shadow check: one corrupted GEMM output value is exactly one mismatch", "[shadow]") {
  const ShadowReport report = train_three_steps(
      std::make_shared<FaultyBackend>(Fault::gemm_output, 4), recipes::Scaling::current, 1);
  INFO(describe(report));
  REQUIRE(report.mismatches == 1);
  CHECK(report.by_key.begin()->first.ends_with("|output"));
  CHECK(report.first.at(0).find("output[3]") != std::string::npos);
}

TEST_CASE("Shadow check: one corrupted amax-history entry is exactly one mismatch", "[shadow]") {
  const ShadowReport report = train_three_steps(
      std::make_shared<FaultyBackend>(Fault::history_entry, 1), recipes::Scaling::delayed, 1);
  INFO(describe(report));
  REQUIRE(report.mismatches == 1);
  CHECK(report.by_key.begin()->first.ends_with("|backward|history"));
}

TEST_CASE("Shadow check: --shadow-every 2 checks steps 0 and 2, not step 1", "[shadow]") {
  // Quantize call 15 is in step 1: not replayed, so not seen; steps 0 and 2 are.
  const ShadowReport skipped = train_three_steps(
      std::make_shared<FaultyBackend>(Fault::code_byte, 15), recipes::Scaling::mxfp8, 2);
  const ShadowReport every = train_three_steps(
      std::make_shared<FaultyBackend>(Fault::none, 0), recipes::Scaling::mxfp8, 1);
  INFO(describe(skipped));
  CHECK(skipped.mismatches == 0);
  CHECK(skipped.operations * 3 == every.operations * 2);
}

}  // namespace fp8lab::experiments

namespace fp8lab::experiments {

TEST_CASE("Backend choice: --backend and --shadow-every are checked by name", "[shadow]") {
  CHECK_THROWS_WITH(validate({"gpu", 0}), Catch::Contains("accepted: sim, cuda"));
  CHECK_THROWS_WITH(validate({"cuda", -1}), Catch::Contains("accepted: 0 (off) or N >= 1"));
  CHECK_NOTHROW(validate({"cuda", 5}));
  CHECK(make_backend({"sim", 0})->name() == "sim");
  CHECK(dynamic_cast<const ShadowCheckedBackend*>(make_backend({"sim", 0}).get()) == nullptr);
  const auto rehearsal = make_backend({"sim", 3});
  CHECK(rehearsal->name() == "sim");
  const auto* shadowed = dynamic_cast<const ShadowCheckedBackend*>(rehearsal.get());
  REQUIRE(shadowed != nullptr);
  CHECK(shadowed->report().every == 3);
  // On a machine without a device, cuda is refused with the driver's reason (never sim instead);
  // with one, --shadow-every wraps it in the shadow check.
  try {
    const auto backend = make_backend({"cuda", 2});
    CHECK(backend->name() == "cuda");
    CHECK(dynamic_cast<const ShadowCheckedBackend*>(backend.get()) != nullptr);
  } catch (const std::runtime_error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("use --backend sim") != std::string::npos);
  }
}

}  // namespace fp8lab::experiments
