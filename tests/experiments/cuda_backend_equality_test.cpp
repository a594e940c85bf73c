// The cuda backend gives the sim backend's bits (docs/numerics.md §4): two Fp8Linear stacks with the
// same weights, one on each backend, train three steps under each recipe; every output, input /
// weight / bias gradient and delayed-scaling state (every scale and amax-history entry) must be
// bitwise equal. The cuda stack runs under the shadow check with every step replayed, which must
// count 0 mismatches over every quantize (codes, scales, E8M0, statistics), GEMM and update.
// The same holds for a stack whose tensors live on the device (the backend's resident path:
// operands read, kept and written in device memory).
// Label gpu: without a device the shared main prints why and exits 77 (skipped).
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <torch/cuda.h>

#include <memory>
#include <string>
#include <vector>

#include "cuda_backend_test_support.hpp"
#include "experiments/linear/autocast.hpp"
#include "experiments/linear/cuda_backend.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/shadow_check.hpp"
#include "experiments/linear/sim_backend.hpp"

namespace fp8lab::experiments {
namespace {

using recipes::Accumulation;
using recipes::Scaling;
using test::NamedRecipe;

std::vector<NamedRecipe> recipes_under_test() {
  std::vector<NamedRecipe> list;
  list.push_back({"delayed HYBRID (defaults)", test::recipe_with_defaults(Scaling::delayed)});
  {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::delayed);
    r.amax_history_len = 2;
    r.amax_compute_algo = recipes::AmaxComputeAlgo::kMax;
    r.margin = 1;
    r.interval = 2;
    r.gemm = {Accumulation::kFp32Seq, Accumulation::kFp32Seq, Accumulation::kFp32Seq};
    list.push_back({"delayed max h2 m1 i2 fp32_seq", r});
  }
  {
    // Longer than the 12288 entries gpu::scaling::delayed_update once staged in shared memory.
    recipes::Recipe r = test::recipe_with_defaults(Scaling::delayed);
    r.amax_history_len = 20000;
    list.push_back({"delayed history 20000", r});
  }
  list.push_back({"current", test::recipe_with_defaults(Scaling::current)});
  {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::current);
    r.power_2_scales = true;
    r.fp8_format = recipes::Fp8Format::kE4M3;
    list.push_back({"current pow2 E4M3", r});
  }
  list.push_back({"tensorwise", test::recipe_with_defaults(Scaling::tensorwise)});
  list.push_back({"rowwise", test::recipe_with_defaults(Scaling::rowwise)});
  list.push_back({"rowwise_with_gw_hp", test::recipe_with_defaults(Scaling::rowwise_with_gw_hp)});
  list.push_back({"block", test::recipe_with_defaults(Scaling::block)});
  list.push_back({"mxfp8 te", test::recipe_with_defaults(Scaling::mxfp8)});
  {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::mxfp8);
    r.mx_scale_mode = recipes::E8M0Mode::kRceil;
    r.gemm = {Accumulation::kFp32Seq, Accumulation::kHopperFastAccum, Accumulation::kFp32Seq};
    list.push_back({"mxfp8 rceil mixed accumulation", r});
  }
  {
    recipes::Recipe r = test::recipe_with_defaults(Scaling::delayed);
    r.override_linear_precision.dgrad = true;  // dgrad through the high-precision GEMM
    list.push_back({"delayed, dgrad in high precision", r});
  }
  {
    // TE's MXFP8 2-D weights: the weight's fprop and dgrad operands in 32 x 32 tiles.
    recipes::Recipe r = test::recipe_with_defaults(Scaling::mxfp8);
    r.mx_2d = true;
    list.push_back({"mxfp8 te mx_2d", r});
    r.mx_scale_mode = recipes::E8M0Mode::kFloor;
    r.gemm = {Accumulation::kFp32Seq, Accumulation::kFp32Seq, Accumulation::kHopperFastAccum};
    list.push_back({"mxfp8 floor mx_2d fp32_seq/hopper_fast", r});
  }
  // backward_override dequantized: dgrad and wgrad in high precision on the fprop codes,
  // dequantized (gpu::dequantize on the resident path, sim::scaling::dequantize on the host path).
  for (const Scaling scaling : {Scaling::current, Scaling::block, Scaling::mxfp8}) {
    recipes::Recipe r = test::recipe_with_defaults(scaling);
    r.backward_override = recipes::BackwardOverride::kDequantized;
    r.mx_2d = scaling == Scaling::mxfp8;
    list.push_back({std::string(recipes::name(scaling)) + (r.mx_2d ? " mx_2d" : "") +
                        " backward_override dequantized",
                    r});
  }
  for (const double scale : {1.0, 0.0625}) {  // at 1 the outlier saturates, gradients underflow
    recipes::Recipe r = test::recipe_with_defaults(Scaling::static_);
    r.static_scale = scale;
    list.push_back({"static " + std::to_string(scale), r});
  }
  return list;
}

// Activations over a few binades with rare large outliers (saturation under delayed scaling).
torch::Tensor activations(std::vector<std::int64_t> shape, std::uint64_t seed) {
  torch::Tensor t = test::normal(shape, seed);
  t.index_put_({0, 0}, 900.0f);
  t.index_put_({1, 3}, -3e-6f);
  return t;
}

struct Stack {
  Fp8Linear first{nullptr};
  Fp8Linear second{nullptr};
};

Stack make_stack(const recipes::Recipe& r, std::shared_ptr<const LinearBackend> backend,
                 torch::Device device = torch::kCPU) {
  // Partial 32- and 128-element blocks along every K (in 160, hidden 96, rows 72).
  return {Fp8Linear(test::normal({96, 160}, 1, 0.05).to(device).requires_grad_(true),
                    test::normal({96}, 2, 0.01).to(device).requires_grad_(true), r, backend,
                    HighPrecision::fp32),
          Fp8Linear(test::normal({48, 96}, 3, 0.05).to(device).requires_grad_(true),
                    torch::Tensor(), r, backend, HighPrecision::fp32)};
}

struct StepResult {
  torch::Tensor y, dx;
  std::vector<torch::Tensor> grads;
};

// One step of a stack whose tensors are on `device`; the results copied to the CPU.
StepResult step(Stack& s, int index, torch::Device device = torch::kCPU) {
  for (auto* layer : {s.first.get(), s.second.get()}) {
    for (auto& p : layer->parameters()) p.mutable_grad() = torch::Tensor();
  }
  const torch::Tensor x =
      activations({72, 160}, 10 + static_cast<std::uint64_t>(index)).to(device).requires_grad_(true);
  torch::Tensor y;
  {
    Fp8Autocast fp8(true);
    y = s.second->forward(s.first->forward(x));
  }
  y.backward(test::normal({72, 48}, 20 + static_cast<std::uint64_t>(index), 1e-3).to(device));
  StepResult r{y.detach().cpu(), x.grad().cpu(), {}};
  for (auto* layer : {s.first.get(), s.second.get()}) {
    for (auto& p : layer->parameters()) r.grads.push_back(p.grad().cpu());
  }
  return r;
}

void check_same_floats(const std::string& what, const std::vector<float>& cuda,
                       const std::vector<float>& sim) {
  INFO(what);
  REQUIRE(cuda.size() == sim.size());
  for (std::size_t i = 0; i < cuda.size(); ++i) {
    if (test::bits_of(cuda[i]) != test::bits_of(sim[i])) {
      FAIL_CHECK(what << "[" << i << "]: cuda 0x" << std::hex << test::bits_of(cuda[i]) << " ("
                      << std::dec << cuda[i] << "), sim 0x" << std::hex << test::bits_of(sim[i])
                      << " (" << std::dec << sim[i] << ")");
      return;
    }
  }
}

void check_same_state(const std::string& layer, const LinearScalingState& cuda,
                      const LinearScalingState& sim) {
  const DelayedStateSnapshot c = CudaBackend::delayed_snapshot(cuda);
  const DelayedStateSnapshot s = test::sim_delayed_snapshot(sim);
  REQUIRE(c.history_len == s.history_len);
  check_same_floats(layer + " forward history", c.forward_history, s.forward_history);
  check_same_floats(layer + " forward scale", c.forward_scale, s.forward_scale);
  check_same_floats(layer + " backward history", c.backward_history, s.backward_history);
  check_same_floats(layer + " backward scale", c.backward_scale, s.backward_scale);
  CHECK(c.forward_updates == s.forward_updates);
  CHECK(c.backward_updates == s.backward_updates);
}

// One training step of the two stacks: output, input gradient and every parameter gradient.
void check_same_step(const StepResult& c, const StepResult& s) {
  CHECK(test::bitwise_difference(c.y, s.y) == "");
  CHECK(test::bitwise_difference(c.dx, s.dx) == "");
  REQUIRE(c.grads.size() == s.grads.size());
  for (std::size_t g = 0; g < c.grads.size(); ++g) {
    INFO("parameter gradient " << g);
    CHECK(test::bitwise_difference(c.grads[g], s.grads[g]) == "");
  }
}

// `steps` steps of every recipe's stack (the delayed ones alone with `delayed_only`) with its
// tensors on `device` through `backend`, and of the same stack on the host through sim:
// check(named, on_backend, on_sim, backend's step, sim's step) after each step.
template <typename Check>
void against_sim(std::shared_ptr<const LinearBackend> backend, torch::Device device, int steps,
                 bool delayed_only, Check check) {
  auto sim = std::make_shared<const SimBackend>();
  for (const NamedRecipe& named : recipes_under_test()) {
    if (delayed_only && named.recipe.scaling != Scaling::delayed) continue;
    INFO("recipe " << named.name);
    Stack on_backend = make_stack(named.recipe, backend, device);
    Stack on_sim = make_stack(named.recipe, sim);
    for (int i = 0; i < steps; ++i) {
      INFO("step " << i);
      const StepResult b = step(on_backend, i, device);
      const StepResult s = step(on_sim, i);
      check(named, on_backend, on_sim, b, s);
    }
  }
}

void check_same_states(const Stack& on_cuda, const Stack& on_sim) {
  check_same_state("first", on_cuda.first->scaling_state(), on_sim.first->scaling_state());
  check_same_state("second", on_cuda.second->scaling_state(), on_sim.second->scaling_state());
}

// Three steps of every recipe's stack with its tensors on `device` through the shadow-checked
// cuda backend, each step bit for bit equal to the same stack on the host through sim; the shadow
// check counts no mismatch.
void check_shadowed_stack_equals_sim(torch::Device device) {
  auto cuda = std::make_shared<const CudaBackend>();
  auto shadowed = std::make_shared<const ShadowCheckedBackend>(cuda, &CudaBackend::delayed_snapshot,
                                                               ShadowOptions{.every = 1});
  against_sim(shadowed, device, 3, false,
              [](const NamedRecipe&, const Stack&, const Stack&, const StepResult& c,
                 const StepResult& s) { check_same_step(c, s); });
  const ShadowReport report = shadowed->report();
  INFO(to_json(report).dump(1));
  CHECK(report.mismatches == 0);
  CHECK(report.operations > 100);
}

}  // namespace

TEST_CASE("cuda backend: Fp8Linear forward and backward equal the sim backend bit for bit, and "
          "the shadow check counts 0 mismatches",
          "[cuda_backend][gpu]") {
  check_shadowed_stack_equals_sim(torch::kCPU);
}

TEST_CASE("cuda backend: a stack whose tensors live on the device (resident operands) equals the "
          "sim backend bit for bit, and the shadow check counts 0 mismatches",
          "[cuda_backend][gpu]") {
  REQUIRE(torch::cuda::is_available());  // LibTorch must see the device the backend found
  check_shadowed_stack_equals_sim(torch::Device(torch::kCUDA));
}

// The resident path as training runs it: no shadow check, so nothing synchronizes between calls
// (the shadow check's host copies synchronize every call and would hide a stream-order or
// lifetime race); the delayed states, whose updates are queued unsynchronized, are read after
// every step.
TEST_CASE("cuda backend: a resident stack without the shadow check equals the sim backend bit for "
          "bit, delayed-scaling states included",
          "[cuda_backend][gpu]") {
  REQUIRE(torch::cuda::is_available());
  against_sim(std::make_shared<const CudaBackend>(), torch::Device(torch::kCUDA), 4, false,
              [](const NamedRecipe& named, const Stack& on_cuda, const Stack& on_sim,
                 const StepResult& c, const StepResult& s) {
                check_same_step(c, s);
                if (named.recipe.scaling == Scaling::delayed) check_same_states(on_cuda, on_sim);
              });
}

TEST_CASE("sim backend: a Linear whose tensors live on the device is refused by name",
          "[cuda_backend][gpu]") {
  REQUIRE(torch::cuda::is_available());
  Stack on_sim = make_stack(test::recipe_with_defaults(Scaling::current),
                            std::make_shared<const SimBackend>(), torch::Device(torch::kCUDA));
  Fp8Autocast fp8(true);
  CHECK_THROWS_WITH(on_sim.first->forward(activations({72, 160}, 1).to(torch::kCUDA)),
                    Catch::Contains("backend sim takes host memory only"));
}

TEST_CASE("cuda backend: delayed-scaling states equal sim's after every step",
          "[cuda_backend][gpu]") {
  against_sim(std::make_shared<const CudaBackend>(), torch::kCPU, 4, true,
              [](const NamedRecipe&, const Stack& on_cuda, const Stack& on_sim, const StepResult& c,
                 const StepResult& s) {
                CHECK(test::bitwise_difference(c.y, s.y) == "");
                check_same_states(on_cuda, on_sim);
              });
}

TEST_CASE("cuda backend: accumulation `exact` has no GPU kernel and is refused by name",
          "[cuda_backend][gpu]") {
  CudaBackend cuda;
  sim::QuantizedTensor t;
  std::vector<float> out(1);
  CHECK_THROWS_WITH(cuda.gemm(Gemm::kFprop, t, t, Accumulation::kExact, {out, 1, 1}),
                    Catch::Contains("`exact` has no GPU kernel"));
}

}  // namespace fp8lab::experiments
