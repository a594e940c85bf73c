// The shadow check (experiments/linear/shadow_check.hpp) finds what it must: it watches a backend
// that is the sim backend except for one deliberately corrupted value (a code byte of one
// quantize, one GEMM output, one amax-history entry) and must report exactly that one mismatch,
// with its layer, tensor and kind; the same run without corruption reports 0 mismatches over a
// non-zero number of comparisons. Needs no GPU: the watched backend is SimBackend plus the fault.
// Also: the --backend / --shadow-every choice (cuda_backend.hpp) is checked by name, and the
// sweep's summary does not count a check that compared no value as clean.
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cuda_backend_test_support.hpp"
#include "experiments/linear/autocast.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/shadow_check.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "experiments/run/run_ids.hpp"
#include "experiments/stats/shadow_summary.hpp"
#include "sim/scaling/stats.hpp"
#include "tests/support/cli.hpp"

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
  sim::scaling::QuantizeResult quantize(LinearScalingState& state, Operand tensor, Gemm role,
                                        ConstMatrix x) const override {
    auto result = sim_.quantize(state, tensor, role, x);
    if (fault_ == Fault::code_byte && quantizes_++ == at_) result.tensor.data[5] ^= 0x01;
    return result;
  }
  void gemm(Gemm role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
            recipes::Accumulation accumulation, MutableMatrix out) const override {
    sim_.gemm(role, a, b, accumulation, out);
    if (fault_ == Fault::gemm_output && gemms_++ == at_)
      out.data[3] = std::nextafter(out.data[3], 1e30f);
  }
  void high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b, HighPrecision precision,
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

// Three steps with one fault planted at operation `at`: the shadow check counts exactly one
// mismatch, under one key "linear#...<key_end>", with one description, which contains `names`
// where one is given.
void check_one_mismatch(Fault fault, int at, recipes::Scaling scaling, const std::string& key_end,
                        const std::string& names) {
  const ShadowReport report =
      train_three_steps(std::make_shared<FaultyBackend>(fault, at), scaling, 1);
  INFO(describe(report));
  REQUIRE(report.mismatches == 1);
  REQUIRE(report.by_key.size() == 1);
  const std::string key = report.by_key.begin()->first;
  CHECK(key.ends_with(key_end));
  CHECK(key.starts_with("linear#"));
  REQUIRE(report.first.size() == 1);
  if (!names.empty()) CHECK(report.first[0].find(names) != std::string::npos);
}

}  // namespace

TEST_CASE("Shadow check: sim watched by sim reports 0 mismatches over every call", "[shadow]") {
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
  check_one_mismatch(Fault::code_byte, 15, scaling, "|code", "code[5]: faulty 0x");
}

TEST_CASE("Shadow check: one corrupted GEMM output value is exactly one mismatch", "[shadow]") {
  check_one_mismatch(Fault::gemm_output, 4, recipes::Scaling::current, "|output", "output[3]");
}

TEST_CASE("Shadow check: one corrupted amax-history entry is exactly one mismatch", "[shadow]") {
  check_one_mismatch(Fault::history_entry, 1, recipes::Scaling::delayed, "|backward|history", "");
}

TEST_CASE("Shadow check: --shadow-every 2 checks steps 0 and 2, not step 1", "[shadow]") {
  // Quantize call 15 is in step 1: not replayed, so not seen; steps 0 and 2 are.
  const ShadowReport skipped = train_three_steps(
      std::make_shared<FaultyBackend>(Fault::code_byte, 15), recipes::Scaling::mxfp8, 2);
  const ShadowReport every = train_three_steps(std::make_shared<FaultyBackend>(Fault::none, 0),
                                               recipes::Scaling::mxfp8, 1);
  INFO(describe(skipped));
  CHECK(skipped.mismatches == 0);
  CHECK(skipped.operations * 3 == every.operations * 2);
}

namespace {

// SimBackend with a resident path whose "device" memory is host memory: cuda matrices are host
// spans here, so the shadow check's resident replay (quantize_resident, gemm_resident,
// dequantize_resident, high_precision_gemm on cuda matrices, to_host) runs without a GPU.
// `corrupt_code` flips a code byte of every resident quantize, `corrupt_dequantized` one value
// of every dequantize_resident by one ulp.
class HostResidentBackend final : public LinearBackend {
 public:
  HostResidentBackend(bool corrupt_code, bool corrupt_dequantized)
      : corrupt_code_(corrupt_code), corrupt_dequantized_(corrupt_dequantized) {}
  std::string_view name() const override { return "resident"; }
  std::unique_ptr<LinearScalingState> make_state(const recipes::Recipe& r) const override {
    return sim_.make_state(r);
  }
  sim::scaling::QuantizeResult quantize(LinearScalingState& state, Operand tensor, Gemm role,
                                        ConstMatrix x) const override {
    return sim_.quantize(state, tensor, role, x);
  }
  void gemm(Gemm role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
            recipes::Accumulation accumulation, MutableMatrix out) const override {
    sim_.gemm(role, a, b, accumulation, out);
  }
  void high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b, HighPrecision precision,
                           MutableMatrix out) const override {
    sim_.high_precision_gemm(role, host(a), host(b), precision, {out.data, out.rows, out.cols});
  }
  void end_forward(LinearScalingState& state) const override { sim_.end_forward(state); }
  void end_backward(LinearScalingState& state) const override { sim_.end_backward(state); }

  bool accepts(MemorySpace) const override { return true; }
  std::shared_ptr<const ResidentOperand> quantize_resident(LinearScalingState& state,
                                                           Operand tensor, Gemm role,
                                                           ConstMatrix x) const override {
    auto result = sim_.quantize(state, tensor, role, host(x));
    if (corrupt_code_) result.tensor.data[5] ^= 0x01;
    return std::make_shared<const Kept>(std::move(result));
  }
  void gemm_resident(Gemm role, const ResidentOperand& a, const ResidentOperand& b,
                     recipes::Accumulation accumulation, MutableMatrix out) const override {
    sim_.gemm(role, a.to_host().tensor, b.to_host().tensor, accumulation,
              {out.data, out.rows, out.cols});
  }
  std::vector<float> to_host(ConstMatrix x) const override {
    return std::vector<float>(x.data.begin(), x.data.end());
  }
  void dequantize_resident(const ResidentOperand& operand, MutableMatrix out) const override {
    const std::vector<float> values = sim::scaling::dequantize(operand.to_host().tensor);
    std::copy(values.begin(), values.end(), out.data.begin());
    if (corrupt_dequantized_) out.data[7] = std::nextafter(out.data[7], 1e30f);
  }

 private:
  struct Kept final : ResidentOperand {
    explicit Kept(sim::scaling::QuantizeResult r) : result(std::move(r)) {}
    sim::scaling::QuantizeResult to_host() const override { return result; }
    sim::scaling::QuantizeResult result;
  };
  static ConstMatrix host(ConstMatrix x) { return {x.data, x.rows, x.cols}; }

  SimBackend sim_;
  bool corrupt_code_;
  bool corrupt_dequantized_;
};

// One training step of one Linear (x [48, 96], W [64, 96]) through the resident calls of the
// shadow-checked backend, its "device" matrices in host memory; dgrad runs in high precision on
// the fprop weight's codes dequantized (backward_override dequantized's call).
ShadowReport resident_linear_step(bool corrupt_code, recipes::Scaling scaling,
                                  bool corrupt_dequantized = false) {
  auto watched = std::make_shared<const HostResidentBackend>(corrupt_code, corrupt_dequantized);
  const ShadowCheckedBackend shadowed(watched, &sim_delayed_snapshot, ShadowOptions{.every = 1});
  const auto state = shadowed.make_state(recipe_of(scaling));
  const auto values = [](std::vector<std::int64_t> shape, std::uint64_t seed) {
    const torch::Tensor t = test::normal(shape, seed);
    return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  };
  const std::vector<float> x = values({48, 96}, 1), w = values({64, 96}, 2),
                           dy = values({48, 64}, 3);
  // The operands as the resident calls take them ("device" memory), and one operand's resident
  // quantization.
  const ConstMatrix x_dev{x, 48, 96, MemorySpace::cuda}, w_dev{w, 64, 96, MemorySpace::cuda},
      dy_dev{dy, 48, 64, MemorySpace::cuda};
  const auto resident = [&](Operand operand, Gemm gemm, ConstMatrix m) {
    return shadowed.quantize_resident(*state, operand, gemm, m);
  };
  std::vector<float> y(48 * 64), dx(48 * 96), dw(64 * 96), w_hat(64 * 96);
  const auto qx = resident(Operand::kInput, Gemm::kFprop, x_dev);
  const auto qw = resident(Operand::kWeight, Gemm::kFprop, w_dev);
  shadowed.gemm_resident(Gemm::kFprop, *qx, *qw, recipes::Accumulation::kFp32Seq,
                         {y, 48, 64, MemorySpace::cuda});
  shadowed.dequantize_resident(*qw, {w_hat, 64, 96, MemorySpace::cuda});
  shadowed.end_forward(*state);
  const auto qdy = resident(Operand::kGradOutput, Gemm::kWgrad, dy_dev);
  const auto qx_wgrad = resident(Operand::kInput, Gemm::kWgrad, x_dev);
  shadowed.gemm_resident(Gemm::kWgrad, *qdy, *qx_wgrad, recipes::Accumulation::kFp32Seq,
                         {dw, 64, 96, MemorySpace::cuda});
  shadowed.high_precision_gemm(Gemm::kDgrad, dy_dev, {w_hat, 64, 96, MemorySpace::cuda},
                               HighPrecision::fp32, {dx, 48, 96, MemorySpace::cuda});
  shadowed.end_backward(*state);
  return shadowed.report();
}

}  // namespace

TEST_CASE("Shadow check: the resident path is replayed through sim like the host path",
          "[shadow]") {
  const auto scaling = GENERATE(recipes::Scaling::delayed, recipes::Scaling::mxfp8);
  INFO("scaling " << recipes::name(scaling));
  const ShadowReport clean = resident_linear_step(false, scaling);
  INFO(describe(clean));
  CHECK(clean.mismatches == 0);
  // 4 quantizes, 2 FP8 GEMMs, 1 dequantize, 1 high-precision GEMM, and for delayed scaling the 2
  // updates.
  CHECK(clean.operations == (scaling == recipes::Scaling::delayed ? 10 : 8));
  CHECK(clean.compared > 2 * 48 * 96 + 2 * 64 * 96 + 48 * 64);
  // A code byte corrupted in every resident quantize: one mismatch per quantize, each a code.
  const ShadowReport corrupt = resident_linear_step(true, scaling);
  INFO(describe(corrupt));
  CHECK(corrupt.by_key.size() == 4);
  for (const auto& [key, count] : corrupt.by_key) {
    CHECK(key.ends_with("|code"));
    CHECK(count == 1);
  }
  // One dequantized value off by one ulp: exactly that mismatch, of kind "dequantized".
  const ShadowReport off = resident_linear_step(false, scaling, true);
  INFO(describe(off));
  CHECK(off.mismatches == 1);
  REQUIRE(off.by_key.size() == 1);
  CHECK(off.by_key.begin()->first.ends_with("|dequantized|dequantized"));
}

}  // namespace fp8lab::experiments

namespace fp8lab::experiments {

TEST_CASE("Backend choice: --backend and --shadow-every are checked by name", "[shadow]") {
  CHECK_THROWS_WITH(validate({"gpu", 0}), Catch::Contains("accepted: sim, cuda, cuda-staged"));
  CHECK_THROWS_WITH(validate({"cuda", -1}), Catch::Contains("accepted: 0 (off) or N >= 1"));
  CHECK_NOTHROW(validate({"cuda", 5}));
  CHECK_NOTHROW(validate({"cuda-staged", 0}));
  // Only a model trained on the GPU gets ids of its own: sim and cuda-staged give the same bits.
  CHECK(placed_run_id("0f0e68dece316888", {"sim", 0}) == "0f0e68dece316888");
  CHECK(placed_run_id("0f0e68dece316888", {"cuda-staged", 1}) == "0f0e68dece316888");
  CHECK(placed_run_id("0f0e68dece316888", {"cuda", 0}) == "0f0e68dece316888-cuda");
  CHECK(placed_run_id("baseline-mlp-seed0-fp32", {"cuda", 1}) == "baseline-mlp-seed0-fp32-cuda");
  CHECK(make_backend({"sim", 0})->name() == "sim");
  CHECK(dynamic_cast<const ShadowCheckedBackend*>(make_backend({"sim", 0}).get()) == nullptr);
  const auto rehearsal = make_backend({"sim", 3});
  CHECK(rehearsal->name() == "sim");
  const auto* shadowed = dynamic_cast<const ShadowCheckedBackend*>(rehearsal.get());
  REQUIRE(shadowed != nullptr);
  CHECK(shadowed->report().every == 3);
  // On a machine without a device, cuda is refused with the driver's reason (never sim instead);
  // with one, --shadow-every wraps it in the shadow check.
  for (const std::string name : {"cuda", "cuda-staged"}) {
    try {
      const auto backend = make_backend({name, 2});
      CHECK(backend->name() == "cuda");
      CHECK(dynamic_cast<const ShadowCheckedBackend*>(backend.get()) != nullptr);
    } catch (const std::runtime_error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find("use --backend sim") != std::string::npos);
    }
  }
}

}  // namespace fp8lab::experiments

namespace fp8lab::experiments {

TEST_CASE("Shadow summary: a record whose check compared no value is not clean", "[shadow]") {
  const testing::Scratch root("shadow-summary");
  std::filesystem::create_directories(root / "runs");
  const auto write_record = [&](std::int64_t compared) {
    nlohmann::json record = {{"status", "finished"}, {"backend", "cuda"}};
    record["shadow_check"] = {{"mismatches", 0}, {"compared", compared}, {"operations", 0}};
    std::ofstream(root / "runs" / "a.json") << record.dump();
  };
  write_record(12);
  const ShadowSummary checked = summarize_shadow_checks(root.string());
  INFO(checked.text);
  CHECK(checked.clean());
  write_record(0);
  const ShadowSummary empty = summarize_shadow_checks(root.string());
  INFO(empty.text);
  CHECK(empty.without_check == 1);
  CHECK_FALSE(empty.clean());
  CHECK(empty.text.find("compared no value") != std::string::npos);
}

}  // namespace fp8lab::experiments
