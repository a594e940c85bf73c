// The CUDA kernels of torch.ops.fp8lab.* (FP8LAB_PYTHON_CUDA=ON): the same schemas, checks and
// lowering as the CPU kernels (kernels.hpp), executed by gpu/'s host API on the tensors' device
// pointers, on torch's current CUDA stream. gpu/'s kernels each equal their sim/ twin bit for bit
// (gpu/README.md), so a CUDA tensor gets the CPU op's bits. What gpu/ lacks raises
// NotImplementedError naming it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>

namespace fp8lab::python {

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_cuda(
    const at::Tensor& x, std::string_view recipe, std::string_view operand, std::string_view gemm,
    const std::optional<at::Tensor>& scale);

at::Tensor dequantize_cuda(const at::Tensor& codes, const at::Tensor& scale_inv,
                           std::string_view recipe, std::string_view operand,
                           std::string_view gemm);

at::Tensor scaled_mm_cuda(const at::Tensor& a, const at::Tensor& a_scale_inv, const at::Tensor& b,
                          const at::Tensor& b_scale_inv, std::string_view recipe,
                          std::string_view gemm, const std::optional<at::Tensor>& bias,
                          std::optional<std::string_view> accumulation,
                          std::optional<at::ScalarType> out_dtype);

at::Tensor high_precision_mm_cuda(const at::Tensor& a, const at::Tensor& b, std::string_view gemm,
                                  const std::optional<at::Tensor>& bias, bool bf16_operands,
                                  std::optional<at::ScalarType> out_dtype);

std::tuple<at::Tensor, at::Tensor> delayed_update_cuda(
    const at::Tensor& amax_history, const at::Tensor& scale, const at::Tensor& amax,
    std::string_view recipe, std::string_view operand, std::int64_t update);

}  // namespace fp8lab::python
