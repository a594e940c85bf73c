// A typed device allocation that frees itself, with blocking copies to and from host vectors.
// For tests, benchmarks and `fp8lab check`; the kernels' API takes raw device pointers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "gpu/cuda_check.hpp"

namespace fp8lab::gpu {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) FP8LAB_CUDA_CHECK(cudaMalloc(&data_, count_ * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) {
    other.data_ = nullptr;
    other.count_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = other.data_;
      count_ = other.count_;
      other.data_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::runtime_error("DeviceBuffer::upload: size mismatch");
    if (count_ > 0)
      FP8LAB_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0)
      FP8LAB_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  void zero() {
    if (count_ > 0) FP8LAB_CUDA_CHECK(cudaMemset(data_, 0, bytes()));
  }

 private:
  void release() {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace fp8lab::gpu
