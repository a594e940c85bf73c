// A sim::QuantizedTensor copied to the GPU, viewed as a gpu::gemm operand.
#pragma once

#include <cstdint>

#include "gpu/device_buffer.hpp"
#include "gpu/gemm/gemm.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::experiments::gpu_check {

struct DeviceTensor {
  const sim::QuantizedTensor& host;
  gpu::DeviceBuffer<std::uint8_t> codes;
  gpu::DeviceBuffer<float> scale_inv;

  explicit DeviceTensor(const sim::QuantizedTensor& t)
      : host(t), codes(t.data), scale_inv(t.scale_inv) {}

  gpu::DeviceGemmOperand operand(bool k_is_cols) const {
    return {codes.get(),     scale_inv.get(), host.rows,   host.cols,
            host.block_rows, host.block_cols, host.format, k_is_cols};
  }
};

}  // namespace fp8lab::experiments::gpu_check
