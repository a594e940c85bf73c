#include "sim/optim/adamw.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "sim/cast.hpp"
#include "sim/rng.hpp"

namespace fp8lab::sim::optim {
namespace {

double power_of(double base, std::int64_t exponent) {
  double result = 1.0;
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result *= base;
    base *= base;
  }
  return result;
}

double square(double x) { return x * x; }

}  // namespace

MomentStates initial_moments(std::size_t n, const OptimizerPrecision& precision) {
  return {initial_state(n, precision.m), initial_state(n, precision.v)};
}

StepErrors& StepErrors::operator+=(const StepErrors& o) {
  m_signal += o.m_signal;
  m_noise += o.m_noise;
  v_signal += o.v_signal;
  v_noise += o.v_noise;
  update_signal += o.update_signal;
  update_noise += o.update_noise;
  count += o.count;
  m_amax = std::fmax(m_amax, o.m_amax);
  v_amax = std::fmax(v_amax, o.v_amax);
  m_underflowed += o.m_underflowed;
  v_underflowed += o.v_underflowed;
  m_nan += o.m_nan;
  v_nan += o.v_nan;
  return *this;
}

std::uint16_t fp32_to_bf16_stochastic(float x, std::uint32_t random_bits) {
  if (!std::isfinite(x)) return fp32_to_bf16(x);
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  // Adding to the magnitude's bits carries into the exponent where it must (a finite x near
  // bf16's max can reach Inf, as a round up there does).
  return static_cast<std::uint16_t>((bits + (random_bits & 0xFFFFu)) >> 16);
}

StepErrors adamw_step(const AdamWHyper& hyper, const OptimizerPrecision& precision,
                      std::span<float> weights, std::span<const float> grads, MomentStates& state,
                      std::uint64_t seed, std::uint64_t stream) {
  const std::size_t n = weights.size();
  if (grads.size() != n)
    throw std::invalid_argument("adamw_step: weights and grads differ in size");
  if (hyper.step < 1) throw std::invalid_argument("adamw_step: step counts from 1");
  std::vector<float> m(n), v(n), stored(n);
  decode_state(state.m, precision.m, m);
  decode_state(state.v, precision.v, v);
  const float bc1 = static_cast<float>(1.0 - power_of(hyper.beta1, hyper.step));
  const float bc2 = static_cast<float>(1.0 - power_of(hyper.beta2, hyper.step));
  const float step_size = hyper.lr / bc1;
  const float sqrt_bc2 = std::sqrt(bc2);
  const auto decay = static_cast<float>(1.0 - static_cast<double>(hyper.lr) * hyper.weight_decay);
  const float one_minus_b1 = 1.0f - hyper.beta1, one_minus_b2 = 1.0f - hyper.beta2;
  StepErrors e;
  for (std::size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m[i] = hyper.beta1 * m[i] + one_minus_b1 * g;
    v[i] = hyper.beta2 * v[i] + one_minus_b2 * (g * g);
    const float before = weights[i];
    const float denom = std::sqrt(v[i]) / sqrt_bc2 + hyper.eps;
    const float w = before * decay - step_size * (m[i] / denom);
    float kept = w;
    if (precision.master == MasterWeights::kBf16) {
      kept = bf16_to_fp32(fp32_to_bf16(w));
    } else if (precision.master == MasterWeights::kBf16Stochastic) {
      kept = bf16_to_fp32(fp32_to_bf16_stochastic(w, philox_random_word(seed, stream, i)));
    }
    weights[i] = kept;
    e.update_signal += square(static_cast<double>(before) - w);
    e.update_noise += square(static_cast<double>(kept) - w);
  }
  e.count = static_cast<std::int64_t>(n);
  // Each moment stored, read back, and its storing error tallied (the same for m and v).
  const auto store = [&](const std::vector<float>& x, const StateQuantization& q, StoredState& to,
                         double& signal, double& noise, double& amax, std::int64_t& underflowed,
                         std::int64_t& nan) {
    encode_state(x, q, to);
    decode_state(to, q, stored);
    for (std::size_t i = 0; i < n; ++i) {
      signal += square(x[i]);
      noise += square(static_cast<double>(stored[i]) - x[i]);
      amax = std::fmax(amax, std::fabs(x[i]));
      underflowed += x[i] != 0.0f && stored[i] == 0.0f ? 1 : 0;
      nan += std::isnan(stored[i]) ? 1 : 0;
    }
  };
  store(m, precision.m, state.m, e.m_signal, e.m_noise, e.m_amax, e.m_underflowed, e.m_nan);
  store(v, precision.v, state.v, e.v_signal, e.v_noise, e.v_amax, e.v_underflowed, e.v_nan);
  return e;
}

}  // namespace fp8lab::sim::optim
