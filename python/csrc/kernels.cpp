#include "python/csrc/kernels.hpp"

#include <ATen/ops/empty.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "python/csrc/checks.hpp"
#include "python/csrc/lowered.hpp"
#include "recipes/lowering.hpp"
#include "recipes/recipe.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::python {
namespace {

using sim::scaling::QuantizeKind;

template <class T>
std::span<const T> span_of(const at::Tensor& t) {
  return {t.const_data_ptr<T>(), static_cast<std::size_t>(t.numel())};
}

template <class T>
at::Tensor tensor_of(const std::vector<T>& values, at::IntArrayRef shape, at::ScalarType dtype) {
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(dtype));
  TORCH_INTERNAL_ASSERT(static_cast<std::size_t>(out.numel()) == values.size());
  std::copy(values.begin(), values.end(), out.mutable_data_ptr<T>());
  return out;
}

// A quantized operand as sim holds it: codes and scale_inv under `plan`, checked against the
// plan's scale blocks so that a transposed or foreign scale tensor is refused, not misread.
sim::QuantizedTensor quantized_operand(const char* op, const char* codes_name,
                                       const char* scale_name, const at::Tensor& codes,
                                       const at::Tensor& scale_inv,
                                       const sim::scaling::QuantizePlan& plan) {
  const sim::scaling::BlockShape blocks =
      checked_scale_blocks(op, codes_name, scale_name, codes, scale_inv, plan);
  const std::int64_t rows = codes.size(0), cols = codes.size(1);
  sim::QuantizedTensor t;
  t.rows = rows;
  t.cols = cols;
  t.format = plan.format;
  const auto data = span_of<std::uint8_t>(codes);
  t.data.assign(data.begin(), data.end());
  t.block_rows = blocks.rows;
  t.block_cols = blocks.cols;
  const auto scales = span_of<float>(scale_inv);
  t.scale_inv.assign(scales.begin(), scales.end());
  t.check_shape(op);
  return t;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_cpu(
    const at::Tensor& x, std::string_view recipe, std::string_view operand, std::string_view gemm,
    const std::optional<at::Tensor>& scale) {
  constexpr const char* op = "fp8lab.quantize";
  check_tensor(op, "x", x, at::kFloat, 2, "a 2-D tensor [rows, cols]");
  return translated(op, [&] {
    const Lowered l = lowered_fp8(op, std::string(recipe), operand, gemm);
    const std::int64_t rows = x.size(0), cols = x.size(1);
    sim::scaling::QuantizeResult result;
    if (l.plan.kind == QuantizeKind::kDelayed) {
      TORCH_CHECK_VALUE(scale.has_value(), op,
                        ": delayed scaling casts with the slot's current scale; pass scale, a "
                        "float32 tensor of one element (1.0 before the first update)");
      check_tensor(op, "scale", *scale, at::kFloat, scale->dim(), "");
      TORCH_CHECK_VALUE(scale->numel() == 1, op, ": scale has shape ", scale->sizes(),
                        "; accepted: one element");
      result = quantize_lowered(op, l, span_of<float>(x), rows, cols, scale->item<float>());
    } else {
      TORCH_CHECK_VALUE(!scale.has_value(), op,
                        ": scale is the state of delayed scaling; the "
                        "recipe's scaling is ",
                        recipes::name(l.recipe->scaling),
                        ", which computes its own: pass scale=None");
      result = quantize_lowered(op, l, span_of<float>(x), rows, cols, std::nullopt);
    }
    const sim::QuantizedTensor& q = result.tensor;
    at::Tensor amax = at::empty({}, at::TensorOptions().dtype(at::kFloat));
    amax.fill_(result.stats.amax);
    return std::make_tuple(tensor_of(q.data, {rows, cols}, at::kByte),
                           tensor_of(q.scale_inv, {q.scale_rows(), q.scale_cols()}, at::kFloat),
                           amax);
  });
}

at::Tensor dequantize_cpu(const at::Tensor& codes, const at::Tensor& scale_inv,
                          std::string_view recipe, std::string_view operand,
                          std::string_view gemm) {
  constexpr const char* op = "fp8lab.dequantize";
  return translated(op, [&] {
    const Lowered l = lowered_fp8(op, std::string(recipe), operand, gemm);
    const sim::QuantizedTensor t =
        quantized_operand(op, "codes", "scale_inv", codes, scale_inv, l.plan);
    return tensor_of(sim::scaling::dequantize(t), {t.rows, t.cols}, at::kFloat);
  });
}

at::Tensor scaled_mm_cpu(const at::Tensor& a, const at::Tensor& a_scale_inv, const at::Tensor& b,
                         const at::Tensor& b_scale_inv, std::string_view recipe,
                         std::string_view gemm, const std::optional<at::Tensor>& bias,
                         std::optional<std::string_view> accumulation,
                         std::optional<at::ScalarType> out_dtype) {
  constexpr const char* op = "fp8lab.scaled_mm";
  return translated(op, [&] {
    const sim::scaling::Gemm g = parse_gemm(op, gemm);
    const sim::scaling::GemmOperands roles = sim::scaling::gemm_operands(g);
    const std::string text(recipe);
    const Lowered la = lowered_fp8(op, text, sim::scaling::to_string(roles.a), gemm);
    const Lowered lb = lowered(op, text, sim::scaling::to_string(roles.b), gemm);
    const sim::QuantizedTensor qa =
        quantized_operand(op, "a", "a_scale_inv", a, a_scale_inv, la.plan);
    const sim::QuantizedTensor qb =
        quantized_operand(op, "b", "b_scale_inv", b, b_scale_inv, lb.plan);

    sim::GemmOptions options;
    options.accumulation = scaled_mm_accumulation(op, *la.recipe, g, gemm, accumulation);
    const at::ScalarType out_type = gemm_out_type(op, out_dtype);
    options.output = out_type == at::kFloat ? sim::GemmOutputType::kFp32
                                            : sim::GemmOutputType::kBf16;
    const auto k_dim = [&](sim::scaling::Operand o) {
      return sim::scaling::k_is_cols(g, o) ? sim::ReduceDim::kCols : sim::ReduceDim::kRows;
    };
    const sim::GemmOperand ga{qa, k_dim(roles.a)}, gb{qb, k_dim(roles.b)};
    const sim::GemmShape shape = sim::gemm_shape(ga, gb);
    if (bias.has_value()) {
      check_bias(op, *bias, shape.n, gemm);
      options.bias = span_of<float>(*bias);
    }
    // bf16 output: sim returns each value's exact fp32, so the conversion below is exact.
    const at::Tensor out = tensor_of(sim::gemm(ga, gb, options), {shape.m, shape.n}, at::kFloat);
    return out_type == at::kFloat ? out : out.to(at::kBFloat16);
  });
}

at::Tensor high_precision_mm_cpu(const at::Tensor& a, const at::Tensor& b, std::string_view gemm,
                                 const std::optional<at::Tensor>& bias, bool bf16_operands,
                                 std::optional<at::ScalarType> out_dtype) {
  constexpr const char* op = "fp8lab.high_precision_mm";
  check_tensor(op, "a", a, at::kFloat, 2, "a 2-D tensor, stored as the Linear stores it");
  check_tensor(op, "b", b, at::kFloat, 2, "a 2-D tensor, stored as the Linear stores it");
  return translated(op, [&] {
    const sim::scaling::Gemm g = parse_gemm(op, gemm);
    const sim::scaling::GemmOperands roles = sim::scaling::gemm_operands(g);
    const auto dense = [&](const at::Tensor& t, sim::scaling::Operand o) {
      return sim::DenseOperand{span_of<float>(t), t.size(0), t.size(1),
                               sim::scaling::k_is_cols(g, o) ? sim::ReduceDim::kCols
                                                             : sim::ReduceDim::kRows};
    };
    const sim::DenseOperand da = dense(a, roles.a), db = dense(b, roles.b);
    const bool a_cols = da.k_dim == sim::ReduceDim::kCols,
               b_cols = db.k_dim == sim::ReduceDim::kCols;
    const std::int64_t k_a = a_cols ? da.cols : da.rows, k_b = b_cols ? db.cols : db.rows;
    TORCH_CHECK_VALUE(k_a == k_b, op, ": a ", a.sizes(), " and b ", b.sizes(), " have K = ", k_a,
                      " and ", k_b, " as operands of ", gemm, "; accepted: the same K");
    const std::int64_t m = a_cols ? da.rows : da.cols, n = b_cols ? db.rows : db.cols;
    sim::HighPrecisionGemmOptions options;
    options.round_operands_to_bf16 = bf16_operands;
    const at::ScalarType out_type = gemm_out_type(op, out_dtype);
    options.output = out_type == at::kFloat ? sim::GemmOutputType::kFp32
                                            : sim::GemmOutputType::kBf16;
    if (bias.has_value()) {
      check_bias(op, *bias, n, gemm);
      options.bias = span_of<float>(*bias);
    }
    const at::Tensor out = tensor_of(sim::high_precision_gemm(da, db, options), {m, n}, at::kFloat);
    return out_type == at::kFloat ? out : out.to(at::kBFloat16);
  });
}

std::tuple<at::Tensor, at::Tensor> delayed_update_cpu(
    const at::Tensor& amax_history, const at::Tensor& scale, const at::Tensor& amax,
    std::string_view recipe, std::string_view operand, std::int64_t update) {
  constexpr const char* op = "fp8lab.delayed_update";
  check_tensor(op, "amax_history", amax_history, at::kFloat, 2,
               "a 2-D tensor [amax_history_len, slots]");
  check_tensor(op, "scale", scale, at::kFloat, 1, "a 1-D tensor [slots]");
  check_tensor(op, "amax", amax, at::kFloat, 1, "a 1-D tensor [slots]");
  return translated(op, [&] {
    const auto parsed = parse_operand(op, operand);
    const Lowered l =
        lowered(op, std::string(recipe), operand, sim::scaling::to_string(pass_gemm(parsed)));
    TORCH_CHECK_VALUE(l.plan.kind == QuantizeKind::kDelayed, op, ": the recipe's scaling is ",
                      recipes::name(l.recipe->scaling),
                      ", which keeps no state; accepted: a "
                      "recipe with scaling: delayed");
    const sim::scaling::DelayedScalingConfig& config = l.plan.delayed;
    const std::int64_t len = amax_history.size(0), slots = amax_history.size(1);
    TORCH_CHECK_VALUE(len == config.amax_history_len, op, ": amax_history has ", len,
                      " rows; accepted: the recipe's amax_history_len = ", config.amax_history_len);
    TORCH_CHECK_VALUE(scale.size(0) == slots && amax.size(0) == slots, op, ": amax_history has ",
                      slots, " slots, scale ", scale.size(0), " and amax ", amax.size(0),
                      "; accepted: one scale and one amax per slot");
    TORCH_CHECK_VALUE(update >= 0, op, ": update = ", update,
                      "; accepted: >= 0 (0, 1, 2, ... counted per pass)");
    at::Tensor history = amax_history.clone();
    at::Tensor new_scale = scale.clone();
    float* h = history.mutable_data_ptr<float>();
    const auto observed = span_of<float>(amax);
    for (std::int64_t j = 0; j < slots; ++j) {
      h[j] = sim::scaling::recorded_amax(h[j], observed[static_cast<std::size_t>(j)]);
    }
    sim::scaling::fused_amax_and_scale_update(
        {h, static_cast<std::size_t>(history.numel())}, len,
        {new_scale.mutable_data_ptr<float>(), static_cast<std::size_t>(slots)}, {},
        config.amax_compute_algo, sim::scaling::delayed_scaled_max(config, l.plan.format),
        config.recomputes_scale(update));
    return std::make_tuple(history, new_scale);
  });
}

}  // namespace fp8lab::python
