// Issue 21, threads per run: the backward pass's dgrad and wgrad as one parallel region
// (LinearBackend::run_independent). On the sim backend at 2 threads the calls run on the pool,
// each on a one-thread backend; their outputs must be the bits of the same GEMMs called one by
// one at 1 thread, every call must run once, and a call's exception must reach the caller.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "experiments/linear/sim_backend.hpp"
#include "recipes/default_recipe.hpp"

namespace fp8lab::experiments {
namespace {

std::vector<float> normal(std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("run_independent: dgrad and wgrad at once give the one-thread bits", "[threads]") {
  const auto scaling = GENERATE(recipes::Scaling::current, recipes::Scaling::mxfp8);
  INFO(recipes::name(scaling));
  const recipes::Recipe recipe = recipes::recipe_with_defaults(scaling);
  const recipes::Accumulation accumulation = recipe.gemm.dgrad;
  // A Linear of 96 tokens, 160 -> 64 (partial tiles and MX blocks of 32).
  constexpr std::int64_t m = 96, k = 160, n = 64;
  const std::vector<float> x = normal(m * k, 1), w = normal(n * k, 2), dy = normal(m * n, 3);
  const SimBackend one(SimBackendOptions{.threads = 1});
  const SimBackend two(SimBackendOptions{.threads = 2});
  auto state = one.make_state(recipe);
  const auto qw = one.quantize(*state, Operand::kWeight, Gemm::kDgrad, {w, n, k});
  const auto qx = one.quantize(*state, Operand::kInput, Gemm::kWgrad, {x, m, k});
  const auto qdy_d = one.quantize(*state, Operand::kGradOutput, Gemm::kDgrad, {dy, m, n});
  const auto qdy_w = one.quantize(*state, Operand::kGradOutput, Gemm::kWgrad, {dy, m, n});

  std::vector<float> dx_ref(m * k), dw_ref(n * k), dx_hp_ref(m * k);
  one.gemm(Gemm::kDgrad, qdy_d.tensor, qw.tensor, accumulation, {dx_ref, m, k});
  one.gemm(Gemm::kWgrad, qdy_w.tensor, qx.tensor, accumulation, {dw_ref, n, k});
  one.high_precision_gemm(Gemm::kDgrad, {dy, m, n}, {w, n, k}, HighPrecision::fp32,
                          {dx_hp_ref, m, k});

  for (const SimBackend* backend : {&one, &two}) {
    INFO("threads " << (backend == &one ? 1 : 2));
    std::vector<float> dx(m * k, -1.0f), dw(n * k, -1.0f), dx_hp(m * k, -1.0f);
    std::atomic<int> runs{0};
    const std::vector<LinearBackend::Call> calls = {
        [&](const LinearBackend& b) {
          b.gemm(Gemm::kDgrad, qdy_d.tensor, qw.tensor, accumulation, {dx, m, k});
          ++runs;
        },
        [&](const LinearBackend& b) {
          b.gemm(Gemm::kWgrad, qdy_w.tensor, qx.tensor, accumulation, {dw, n, k});
          ++runs;
        }};
    backend->run_independent(calls);
    CHECK(runs == 2);
    CHECK(same_bits(dx, dx_ref));
    CHECK(same_bits(dw, dw_ref));
    // One call alone and a high-precision GEMM take the same path.
    const std::vector<LinearBackend::Call> single = {[&](const LinearBackend& b) {
      b.high_precision_gemm(Gemm::kDgrad, {dy, m, n}, {w, n, k}, HighPrecision::fp32,
                            {dx_hp, m, k});
    }};
    backend->run_independent(single);
    CHECK(same_bits(dx_hp, dx_hp_ref));
  }
  CHECK(dx_ref[0] != 0.0f);  // not an all-zero output

  // A call that throws: the caller gets the exception (the other call may or may not run).
  const std::vector<LinearBackend::Call> failing = {
      [](const LinearBackend&) { throw std::runtime_error("call failed on purpose"); },
      [](const LinearBackend&) {}};
  CHECK_THROWS_WITH(two.run_independent(failing), Catch::Contains("call failed on purpose"));
}

}  // namespace fp8lab::experiments
