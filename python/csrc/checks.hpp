// The argument checks and error translation that the CPU kernels (kernels.cpp) and the CUDA
// kernels (cuda/kernels_cuda.cpp) share, so that both refuse the same input with the same words.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <exception>
#include <string>

#include <optional>
#include <string_view>

#include "python/csrc/lowered.hpp"
#include "recipes/lowering.hpp"

namespace fp8lab::python {

inline std::string dtype_name(at::ScalarType type) {
  return "torch." + std::string(c10::getDtypeNames(type).first);
}

// TypeError for a dtype, ValueError for rank and layout: the messages name the op, the argument,
// what it got and what is accepted.
inline void check_tensor(const char* op, const char* name, const at::Tensor& t,
                         at::ScalarType dtype, std::int64_t dim, const char* shape) {
  TORCH_CHECK_TYPE(t.scalar_type() == dtype, op, ": ", name, " has dtype ",
                   dtype_name(t.scalar_type()), "; accepted: ", dtype_name(dtype));
  TORCH_CHECK_VALUE(t.dim() == dim, op, ": ", name, " has shape ", t.sizes(),
                    "; accepted: ", shape);
  TORCH_CHECK_VALUE(t.is_contiguous(), op, ": ", name, " is not contiguous (shape ", t.sizes(),
                    ", strides ", t.strides(), "); accepted: a contiguous tensor (.contiguous())");
}

// The optional bias of a GEMM with N output columns: float32, 1-D, contiguous, N long.
inline void check_bias(const char* op, const at::Tensor& bias, std::int64_t n,
                       std::string_view gemm) {
  check_tensor(op, "bias", bias, at::kFloat, 1, "a 1-D tensor [N]");
  TORCH_CHECK_VALUE(bias.size(0) == n, op, ": bias has shape ", bias.sizes(), "; accepted: [", n,
                    "] (N of this ", gemm, ")");
}

// Runs `body`, turning the std::invalid_argument of sim/ and gpu/ and the RecipeError of recipes/
// into a ValueError with their text (torch's own errors pass through as they are).
template <class Body>
auto translated(const char* op, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    const std::string text = e.what();
    // lowered() already names the op; the recipe's and sim's messages name their own function.
    C10_THROW_ERROR(ValueError, text.rfind(op, 0) == 0 ? text : std::string(op) + ": " + text);
  }
}

// A quantized operand's codes and scale_inv checked against the scale blocks of `plan`, so that a
// transposed or foreign scale tensor is refused, not misread; returns the blocks.
inline sim::scaling::BlockShape checked_scale_blocks(const char* op, const char* codes_name,
                                                     const char* scale_name,
                                                     const at::Tensor& codes,
                                                     const at::Tensor& scale_inv,
                                                     const sim::scaling::QuantizePlan& plan) {
  check_tensor(op, codes_name, codes, at::kByte, 2, "a 2-D tensor of codes [rows, cols]");
  check_tensor(op, scale_name, scale_inv, at::kFloat, 2,
               "a 2-D tensor [ceil(rows / block rows), ceil(cols / block cols)]");
  const std::int64_t rows = codes.size(0), cols = codes.size(1);
  const ScaleShape expected = scale_shape(plan, rows, cols);
  const sim::scaling::BlockShape blocks = plan.blocks(rows, cols);
  TORCH_CHECK_VALUE(scale_inv.size(0) == expected.rows && scale_inv.size(1) == expected.cols, op,
                    ": ", scale_name, " has shape ", scale_inv.sizes(), "; accepted: [",
                    expected.rows, ", ", expected.cols, "] for ", codes_name, " ", codes.sizes(),
                    " in ", blocks.rows, " x ", blocks.cols, " blocks (",
                    sim::scaling::to_string(plan.kind), ")");
  return blocks;
}

// scaled_mm's accumulation model: the named one (recipes/' names), else the recipe's
// gemm.<fprop|dgrad|wgrad> (with per_role rules: that of the GEMM's operands' recipe).
inline sim::Accumulation scaled_mm_accumulation(const char* op, const recipes::Recipe& recipe,
                                                sim::scaling::Gemm g, std::string_view gemm,
                                                std::optional<std::string_view> accumulation) {
  if (accumulation.has_value()) {
    const auto parsed = recipes::parse_accumulation(*accumulation);
    TORCH_CHECK_VALUE(parsed.has_value(), op, ": accumulation '", std::string(*accumulation),
                      "'; accepted: ", recipes::accepted_accumulations(),
                      " (None: the recipe's gemm.", gemm, ")");
    return *parsed;
  }
  // per_role (a Linear's recipe, recipe_for_layer): the GEMM's operands' models.
  const recipes::GemmAccumulation models = recipes::gemm_accumulation(recipe, "");
  return g == sim::scaling::Gemm::kFprop   ? models.fprop
         : g == sim::scaling::Gemm::kDgrad ? models.dgrad
                                           : models.wgrad;
}

// A GEMM op's out_dtype: float32 (None) or bfloat16.
inline at::ScalarType gemm_out_type(const char* op, std::optional<at::ScalarType> out_dtype) {
  const at::ScalarType out_type = out_dtype.value_or(at::kFloat);
  TORCH_CHECK_TYPE(out_type == at::kFloat || out_type == at::kBFloat16, op, ": out_dtype ",
                   dtype_name(out_type), "; accepted: torch.float32, torch.bfloat16");
  return out_type;
}

}  // namespace fp8lab::python
