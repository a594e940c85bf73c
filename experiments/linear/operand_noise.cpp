#include "experiments/linear/operand_noise.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/scaling/execute.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

double NoiseEnergy::sqnr_db() const {
  if (elements == 0) return std::numeric_limits<double>::quiet_NaN();
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

bool noise_sign(std::uint64_t seed, std::uint64_t layer, std::uint64_t call, std::uint64_t index) {
  return (mix(mix(mix(mix(seed) ^ layer) ^ call) ^ index) >> 63) != 0;
}

OperandNoise::OperandNoise(WhatIfRecipe sizing, std::uint64_t seed, std::uint64_t layer)
    : sizing_(std::move(sizing)), seed_(seed), layer_(layer) {}

void OperandNoise::perturb(Operand tensor, Gemm gemm, std::span<float> x, std::int64_t rows,
                           std::int64_t cols) {
  if (x.size() != static_cast<std::size_t>(rows * cols)) {
    throw std::invalid_argument("OperandNoise::perturb: " + std::to_string(x.size()) +
                                " elements for [" + std::to_string(rows) + ", " +
                                std::to_string(cols) + "]");
  }
  const auto t = static_cast<std::size_t>(tensor);
  const auto g = static_cast<std::size_t>(gemm);
  const auto& plan = sizing_.plans[t][g];
  const std::uint64_t call = calls_++;
  if (plan.kind == sim::scaling::QuantizeKind::kHighPrecision) return;
  const auto result = sim::scaling::quantize(plan, x, rows, cols);
  const std::vector<float> xhat = sim::scaling::dequantize(result.tensor);
  NoiseEnergy& energy = energy_[t][g];
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(xhat[i])) continue;
    const float size = std::fabs(xhat[i] - x[i]);  // exact (Sterbenz) unless x̂ saturated or is 0
    energy.signal += static_cast<double>(x[i]) * x[i];
    energy.noise += static_cast<double>(size) * size;
    ++energy.elements;
    x[i] = noise_sign(seed_, layer_, call, i) ? x[i] + size : x[i] - size;
  }
}

}  // namespace fp8lab::experiments
