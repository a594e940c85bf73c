// Helpers shared by the tests of experiments/linear/ (linear_*_test.cpp): deterministic tensors,
// bitwise comparison with a report in bits, recipes for tests. Include it first: it brings in
// LibTorch and then Catch2, because c10's logging defines a CHECK macro (a fatal glog-style check)
// that would otherwise replace Catch's CHECK silently.
#pragma once

#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "recipes/default_recipe.hpp"

namespace fp8lab::experiments::test {

// N(0, std) float32 values from a generator seeded with `seed` (never torch's global one).
inline torch::Tensor normal(std::vector<std::int64_t> shape, std::uint64_t seed, double std = 1.0) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randn(shape, generator, torch::kFloat) * std;
}

inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// "" when a and b hold the same bits (same shape, float32), else the first difference, as bits
// and values, and how many elements differ.
inline std::string bitwise_difference(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.defined() || !b.defined()) {
    return a.defined() == b.defined() ? "" : "one tensor is undefined";
  }
  if (a.sizes() != b.sizes()) {
    std::ostringstream s;
    s << "shapes differ: " << a.sizes() << " vs " << b.sizes();
    return s.str();
  }
  const auto ac = a.contiguous(), bc = b.contiguous();
  const float* pa = ac.const_data_ptr<float>();
  const float* pb = bc.const_data_ptr<float>();
  std::int64_t differing = 0, first = -1;
  for (std::int64_t i = 0; i < ac.numel(); ++i) {
    if (bits_of(pa[i]) != bits_of(pb[i])) {
      if (first < 0) first = i;
      ++differing;
    }
  }
  if (differing == 0) return "";
  std::ostringstream s;
  s << differing << " of " << ac.numel() << " elements differ; first at flat index " << first
    << ": 0x" << std::hex << bits_of(pa[first]) << " (" << std::dec << pa[first] << ") vs 0x"
    << std::hex << bits_of(pb[first]) << " (" << std::dec << pb[first] << ")";
  return s.str();
}

// A recipe of `scaling` with that scaling's defaults (recipes/default_recipe.hpp).
using recipes::recipe_with_defaults;

// A recipe whose GEMMs all use the fp32_seq reference accumulation (tests that bound errors).
inline recipes::Recipe fp32_seq_recipe(recipes::Scaling scaling) {
  recipes::Recipe r = recipe_with_defaults(scaling);
  r.gemm = {recipes::Accumulation::kFp32Seq, recipes::Accumulation::kFp32Seq,
            recipes::Accumulation::kFp32Seq};
  return r;
}

}  // namespace fp8lab::experiments::test
