#include "experiments/linear/cuda_staging.hpp"

#if FP8LAB_HAVE_CUDA

#include <cuda_runtime.h>

#include <algorithm>

#include "gpu/cuda_check.hpp"

namespace fp8lab::experiments {

SliceArena::~SliceArena() { release(); }

void SliceArena::release() noexcept {
  if (data_ == nullptr) return;
  // Both free calls wait for the device's pending work on the allocation.
  if (memory_ == StagingMemory::device) {
    cudaFree(data_);
  } else {
    cudaFreeHost(data_);
  }
  data_ = nullptr;
  capacity_ = 0;
}

std::vector<std::byte*> SliceArena::slices(std::initializer_list<std::size_t> bytes) {
  const auto aligned = [](std::size_t n) {
    return (n + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
  };
  std::size_t total = 0;
  for (const std::size_t n : bytes) total += aligned(n);
  if (total > capacity_) {
    // Doubling keeps the number of reallocations logarithmic in the largest call.
    const std::size_t capacity = std::max(total, 2 * capacity_);
    release();
    void* p = nullptr;
    if (memory_ == StagingMemory::device) {
      FP8LAB_CUDA_CHECK(cudaMalloc(&p, capacity));
    } else {
      FP8LAB_CUDA_CHECK(cudaMallocHost(&p, capacity));
    }
    data_ = static_cast<std::byte*>(p);
    capacity_ = capacity;
  }
  std::vector<std::byte*> starts;
  starts.reserve(bytes.size());
  std::size_t offset = 0;
  for (const std::size_t n : bytes) {
    starts.push_back(data_ + offset);
    offset += aligned(n);
  }
  return starts;
}

}  // namespace fp8lab::experiments

#endif  // FP8LAB_HAVE_CUDA
