#include "experiments/workloads/workload.hpp"

#include <ATen/CPUGeneratorImpl.h>

namespace fp8lab::experiments {

torch::Generator make_generator(std::uint64_t seed, std::uint64_t stream) {
  // splitmix64 of (seed, stream): nearby seeds and streams give unrelated Mersenne Twister seeds.
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + stream + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return at::make_generator<at::CPUGeneratorImpl>(z);
}

}  // namespace fp8lab::experiments
