// The CPU kernels of torch.ops.fp8lab.* (schemas and what each argument means: ops.cpp and
// docs/python.md). Each checks its tensors (TypeError for a dtype, ValueError for a shape, a
// layout or a value, naming what is accepted), lowers the recipe through python/csrc/lowered.hpp
// and runs sim/; an error of recipes/ or sim/ becomes a ValueError carrying its text.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>

namespace fp8lab::python {

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_cpu(const at::Tensor& x,
                                                            std::string_view recipe,
                                                            std::string_view operand,
                                                            std::string_view gemm,
                                                            const std::optional<at::Tensor>& scale);

at::Tensor dequantize_cpu(const at::Tensor& codes, const at::Tensor& scale_inv,
                          std::string_view recipe, std::string_view operand, std::string_view gemm);

at::Tensor scaled_mm_cpu(const at::Tensor& a, const at::Tensor& a_scale_inv, const at::Tensor& b,
                         const at::Tensor& b_scale_inv, std::string_view recipe,
                         std::string_view gemm, const std::optional<at::Tensor>& bias,
                         std::optional<std::string_view> accumulation,
                         std::optional<at::ScalarType> out_dtype);

at::Tensor high_precision_mm_cpu(const at::Tensor& a, const at::Tensor& b, std::string_view gemm,
                                 const std::optional<at::Tensor>& bias, bool bf16_operands,
                                 std::optional<at::ScalarType> out_dtype);

std::tuple<at::Tensor, at::Tensor> delayed_update_cpu(
    const at::Tensor& amax_history, const at::Tensor& scale, const at::Tensor& amax,
    std::string_view recipe, std::string_view operand, std::int64_t update);

}  // namespace fp8lab::python
