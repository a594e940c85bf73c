// Operands for the vendor-GEMM peer checks (cublaslt_checks.cpp, torch_scaled_mm_checks.cpp): the
// same random values and the same scaling recipes, so cuBLASLt and torch._scaled_mm rows are
// measured on operands built one way. Header-only: the torch checks compile in a LibTorch TU.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/rowwise.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::experiments::gpu_check {

// N(0, 1) values times 2^e, e uniform in [-4, 3]: a spread of magnitudes inside each scale block.
inline std::vector<float> peer_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = std::ldexp(normal(rng), static_cast<int>(rng() % 8) - 4);
  return x;
}

enum class PeerScales {
  kPow2Tensorwise,  // TE current scaling, power-of-2 scales
  kTeTensorwise,    // TE current scaling, fp32 scales (not powers of 2)
  kRowwise,         // torchao axiswise rowwise (one scale per row along K), power-of-2
  kBlock,           // TE Float8BlockScaling: 1x128 activations, 128x128 weights (pow2)
  kBlock1x128,      // TE block scaling with 1x128 blocks on both operands (pow2)
};

inline const char* to_string(PeerScales s) {
  switch (s) {
    case PeerScales::kPow2Tensorwise: return "tensorwise pow2";
    case PeerScales::kTeTensorwise: return "tensorwise te";
    case PeerScales::kRowwise: return "rowwise";
    case PeerScales::kBlock: return "block 1x128 x 128x128";
    case PeerScales::kBlock1x128: return "block 1x128 x 1x128";
  }
  return "?";
}

// x as a [rows, cols] operand with K = cols; weight: the GEMM's B (gets the 128x128 blocks).
inline sim::QuantizedTensor quantize_peer_operand(const std::vector<float>& x, std::int64_t rows,
                                                  std::int64_t cols, sim::Format f, PeerScales s,
                                                  bool weight) {
  switch (s) {
    case PeerScales::kBlock:
    case PeerScales::kBlock1x128: {
      sim::scaling::BlockScalingConfig config;
      config.block = weight && s == PeerScales::kBlock ? sim::scaling::kBlock128x128
                                                       : sim::scaling::kBlock1x128;
      return sim::scaling::quantize_block_te(x, rows, cols, f, config).tensor;
    }
    case PeerScales::kPow2Tensorwise:
      return sim::scaling::quantize_current_te(x, rows, cols, f, true).tensor;
    case PeerScales::kTeTensorwise:
      return sim::scaling::quantize_current_te(x, rows, cols, f).tensor;
    case PeerScales::kRowwise:
      return sim::scaling::quantize_axiswise_torchao(x, rows, cols,
                                                     sim::scaling::ScaleAxis::kRowwise, f, true)
          .tensor;
  }
  throw std::logic_error("unknown PeerScales");
}

}  // namespace fp8lab::experiments::gpu_check
