// The memory the cuda backend (cuda_backend.hpp) reuses from call to call: one grow-only device
// allocation and two grow-only pinned host allocations (uploads, downloads), each cut into aligned
// slices per call. A backend call copies its host operands into pinned memory, queues the copies
// to the device, its kernels and the copies of its results back into pinned memory on one stream,
// synchronizes that stream once, and reads the results out of pinned memory. Nothing is allocated
// or freed per call (cudaFree synchronizes the whole device) and no copy into pageable memory
// blocks the host before the call's one synchronization.
// Compiled only where CUDA is (FP8LAB_HAVE_CUDA).
#pragma once

#if FP8LAB_HAVE_CUDA

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <vector>

namespace fp8lab::experiments {

enum class StagingMemory : std::uint8_t { device, pinned_host };

// One grow-only allocation cut into slices aligned to kSliceAlignment bytes.
class SliceArena {
 public:
  static constexpr std::size_t kSliceAlignment = 256;

  explicit SliceArena(StagingMemory memory) : memory_(memory) {}
  SliceArena(const SliceArena&) = delete;
  SliceArena& operator=(const SliceArena&) = delete;
  ~SliceArena();

  // The start of one slice per requested byte size, in order (a 0-byte slice gets a pointer that
  // must not be read). Grows (frees and allocates) when the slices do not fit: call it only when
  // no copy or kernel still uses slices of an earlier call (every backend call ends synchronized).
  std::vector<std::byte*> slices(std::initializer_list<std::size_t> bytes);
  std::size_t capacity() const { return capacity_; }

 private:
  void release() noexcept;

  StagingMemory memory_;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

struct CudaStaging {
  SliceArena device{StagingMemory::device};
  SliceArena upload{StagingMemory::pinned_host};
  SliceArena download{StagingMemory::pinned_host};
  std::mutex mutex;  // held for a whole backend call: one call at a time uses the arenas
};

}  // namespace fp8lab::experiments

#endif  // FP8LAB_HAVE_CUDA
