#include "python/csrc/cuda/kernels_cuda.hpp"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <string>

#include "gpu/gemm/gemm.hpp"
#include "gpu/quantize.hpp"
#include "gpu/scaling/blocked.hpp"
#include "python/csrc/checks.hpp"
#include "python/csrc/kernels.hpp"
#include "python/csrc/lowered.hpp"
#include "sim/cast.hpp"
#include "sim/format.hpp"

namespace fp8lab::python {
namespace {

using sim::scaling::QuantizeKind;

cudaStream_t current_stream(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

void check_same_device(const char* op, const char* name, const at::Tensor& t,
                       const at::Tensor& first) {
  TORCH_CHECK_VALUE(t.device() == first.device(), op, ": ", name, " is on ", t.device(),
                    " and the first tensor on ", first.device(), "; accepted: one CUDA device");
}

// gpu::scaling::quantize runs every stateless plan of 8-bit elements; sub-byte formats (MXFP4,
// MXFP6, NVFP4) have kernels in gpu/scaling/fp4.hpp that no plan reaches yet (docs/fp4.md).
void require_gpu_plan(const char* op, const sim::scaling::QuantizePlan& plan) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      !sim::is_subbyte(plan.format) && plan.kind != QuantizeKind::kNvfp4, op,
      " on CUDA tensors: a ", sim::scaling::to_string(plan.kind), " plan with format ",
      sim::spec(plan.format).name,
      " has no GPU quantizer behind a plan yet (gpu::scaling::quantize refuses sub-byte formats; "
      "gpu/scaling/fp4.hpp's kernels are not wired into it). Move the tensors to the CPU "
      "(.cpu()) to run sim/.");
}

// The device view of a quantized operand, checked as on the CPU (checks.hpp).
gpu::DeviceGemmOperand device_operand(const char* op, const char* codes_name,
                                      const char* scale_name, const at::Tensor& codes,
                                      const at::Tensor& scale_inv,
                                      const sim::scaling::QuantizePlan& plan, bool k_is_cols) {
  const sim::scaling::BlockShape blocks =
      checked_scale_blocks(op, codes_name, scale_name, codes, scale_inv, plan);
  gpu::DeviceGemmOperand d;
  d.codes = codes.const_data_ptr<std::uint8_t>();
  d.scale_inv = scale_inv.const_data_ptr<float>();
  d.rows = codes.size(0);
  d.cols = codes.size(1);
  d.block_rows = blocks.rows;
  d.block_cols = blocks.cols;
  d.format = plan.format;
  d.k_is_cols = k_is_cols;
  return d;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> quantize_cuda(
    const at::Tensor& x, std::string_view recipe, std::string_view operand, std::string_view gemm,
    const std::optional<at::Tensor>& scale) {
  constexpr const char* op = "fp8lab.quantize";
  check_tensor(op, "x", x, at::kFloat, 2, "a 2-D tensor [rows, cols]");
  const c10::cuda::CUDAGuard guard(x.device());
  return translated(op, [&] {
    const Lowered l = lowered_fp8(op, std::string(recipe), operand, gemm);
    const std::int64_t rows = x.size(0), cols = x.size(1);
    const ScaleShape grid = scale_shape(l.plan, rows, cols);
    const cudaStream_t stream = current_stream(x);
    at::Tensor codes = at::empty({rows, cols}, x.options().dtype(at::kByte));
    at::Tensor scale_inv = at::empty({grid.rows, grid.cols}, x.options());
    // gpu::DeviceQuantizeStats, zeroed: the quantizers accumulate into it; its first field is amax.
    at::Tensor stats = at::zeros({static_cast<std::int64_t>(sizeof(gpu::DeviceQuantizeStats))},
                                 x.options().dtype(at::kByte));
    auto* device_stats = reinterpret_cast<gpu::DeviceQuantizeStats*>(stats.mutable_data_ptr());
    if (l.plan.kind == QuantizeKind::kDelayed) {
      TORCH_CHECK_VALUE(scale.has_value(), op,
                        ": delayed scaling casts with the slot's current scale; pass scale, a "
                        "float32 tensor of one element (1.0 before the first update)");
      check_tensor(op, "scale", *scale, at::kFloat, scale->dim(), "");
      check_same_device(op, "scale", *scale, x);
      TORCH_CHECK_VALUE(scale->numel() == 1, op, ": scale has shape ", scale->sizes(),
                        "; accepted: one element");
      // As sim::scaling::quantize_per_tensor: cast_satfinite(RN(x * scale)), RN(1 / scale).
      gpu::QuantizeOutputs out;
      out.codes = codes.mutable_data_ptr<std::uint8_t>();
      out.stats = device_stats;
      out.scale_inv = scale_inv.mutable_data_ptr<float>();
      gpu::quantize(x.const_data_ptr<float>(), x.numel(), scale->const_data_ptr<float>(),
                    l.plan.format, sim::Overflow::kSatFinite, out, stream);
    } else {
      TORCH_CHECK_VALUE(!scale.has_value(), op,
                        ": scale is the state of delayed scaling; the recipe's scaling is ",
                        recipes::name(l.recipe->scaling),
                        ", which computes its own: pass "
                        "scale=None");
      require_gpu_plan(op, l.plan);
      gpu::scaling::BlockedOutputs out;
      out.codes = codes.mutable_data_ptr<std::uint8_t>();
      out.scale_inv = scale_inv.mutable_data_ptr<float>();
      out.stats = device_stats;
      gpu::scaling::quantize(l.plan, x.const_data_ptr<float>(), rows, cols, out, stream);
    }
    at::Tensor amax = stats.narrow(0, 0, sizeof(float)).view(at::kFloat).reshape({}).clone();
    return std::make_tuple(codes, scale_inv, amax);
  });
}

// gpu/ has no dequantize kernel (sim::scaling::dequantize's twin): the op runs sim/ on host copies
// and returns on the codes' device, so a CUDA caller gets the reference values at a copy's cost.
at::Tensor dequantize_cuda(const at::Tensor& codes, const at::Tensor& scale_inv,
                           std::string_view recipe, std::string_view operand,
                           std::string_view gemm) {
  check_same_device("fp8lab.dequantize", "scale_inv", scale_inv, codes);
  TORCH_WARN_ONCE("fp8lab.dequantize on CUDA tensors runs sim/ on a host copy: gpu/ has no "
                  "dequantize kernel");
  return dequantize_cpu(codes.cpu(), scale_inv.cpu(), recipe, operand, gemm).to(codes.device());
}

at::Tensor scaled_mm_cuda(const at::Tensor& a, const at::Tensor& a_scale_inv, const at::Tensor& b,
                          const at::Tensor& b_scale_inv, std::string_view recipe,
                          std::string_view gemm, const std::optional<at::Tensor>& bias,
                          std::optional<std::string_view> accumulation,
                          std::optional<at::ScalarType> out_dtype) {
  constexpr const char* op = "fp8lab.scaled_mm";
  const c10::cuda::CUDAGuard guard(a.device());
  return translated(op, [&] {
    const sim::scaling::Gemm g = parse_gemm(op, gemm);
    const sim::scaling::GemmOperands roles = sim::scaling::gemm_operands(g);
    const std::string text(recipe);
    const Lowered la = lowered_fp8(op, text, sim::scaling::to_string(roles.a), gemm);
    const Lowered lb = lowered(op, text, sim::scaling::to_string(roles.b), gemm);
    for (const auto& [name, t] :
         {std::pair<const char*, const at::Tensor&>{"a_scale_inv", a_scale_inv},
          {"b", b},
          {"b_scale_inv", b_scale_inv}}) {
      check_same_device(op, name, t, a);
    }
    const gpu::DeviceGemmOperand da = device_operand(op, "a", "a_scale_inv", a, a_scale_inv,
                                                     la.plan, sim::scaling::k_is_cols(g, roles.a));
    const gpu::DeviceGemmOperand db = device_operand(op, "b", "b_scale_inv", b, b_scale_inv,
                                                     lb.plan, sim::scaling::k_is_cols(g, roles.b));
    gpu::DeviceGemmOptions options;
    options.model = scaled_mm_accumulation(op, *la.recipe, g, gemm, accumulation);
    gpu::require_kernel(options.model);
    const at::ScalarType out_type = gemm_out_type(op, out_dtype);
    options.bf16_output = out_type == at::kBFloat16;
    const std::int64_t m = da.k_is_cols ? da.rows : da.cols, n = db.k_is_cols ? db.rows : db.cols;
    if (bias.has_value()) {
      check_bias(op, *bias, n, gemm);
      check_same_device(op, "bias", *bias, a);
      options.bias = bias->const_data_ptr<float>();
    }
    at::Tensor out = at::empty({m, n}, a.options().dtype(at::kFloat));
    gpu::gemm(da, db, options, out.mutable_data_ptr<float>(), current_stream(a));
    // bf16 output: gpu/ writes each value's exact fp32, so the conversion below is exact.
    return out_type == at::kFloat ? out : out.to(at::kBFloat16);
  });
}

at::Tensor high_precision_mm_cuda(const at::Tensor& a, const at::Tensor& b, std::string_view gemm,
                                  const std::optional<at::Tensor>& bias, bool bf16_operands,
                                  std::optional<at::ScalarType> out_dtype) {
  constexpr const char* op = "fp8lab.high_precision_mm";
  check_tensor(op, "a", a, at::kFloat, 2, "a 2-D tensor, stored as the Linear stores it");
  check_tensor(op, "b", b, at::kFloat, 2, "a 2-D tensor, stored as the Linear stores it");
  check_same_device(op, "b", b, a);
  const c10::cuda::CUDAGuard guard(a.device());
  return translated(op, [&] {
    const sim::scaling::Gemm g = parse_gemm(op, gemm);
    const sim::scaling::GemmOperands roles = sim::scaling::gemm_operands(g);
    const auto dense = [&](const at::Tensor& t, sim::scaling::Operand o) {
      return gpu::DeviceDenseOperand{t.const_data_ptr<float>(), t.size(0), t.size(1),
                                     sim::scaling::k_is_cols(g, o)};
    };
    const gpu::DeviceDenseOperand da = dense(a, roles.a), db = dense(b, roles.b);
    const std::int64_t k_a = da.k_is_cols ? da.cols : da.rows,
                       k_b = db.k_is_cols ? db.cols : db.rows;
    TORCH_CHECK_VALUE(k_a == k_b, op, ": a ", a.sizes(), " and b ", b.sizes(), " have K = ", k_a,
                      " and ", k_b, " as operands of ", gemm, "; accepted: the same K");
    const std::int64_t m = da.k_is_cols ? da.rows : da.cols, n = db.k_is_cols ? db.rows : db.cols;
    gpu::DenseGemmOptions options;
    options.round_operands_to_bf16 = bf16_operands;
    const at::ScalarType out_type = gemm_out_type(op, out_dtype);
    options.bf16_output = out_type == at::kBFloat16;
    if (bias.has_value()) {
      check_bias(op, *bias, n, gemm);
      check_same_device(op, "bias", *bias, a);
      options.bias = bias->const_data_ptr<float>();
    }
    at::Tensor out = at::empty({m, n}, a.options());
    gpu::high_precision_gemm(da, db, options, out.mutable_data_ptr<float>(), current_stream(a));
    return out_type == at::kFloat ? out : out.to(at::kBFloat16);
  });
}

// gpu::scaling::delayed_update fuses the update with the casts that record the amax; no gpu/
// function merges a given amax into history row 0 (sim::scaling::recorded_amax). So the op runs
// sim/ on host copies of the (small) state and returns it on the history's device.
std::tuple<at::Tensor, at::Tensor> delayed_update_cuda(
    const at::Tensor& amax_history, const at::Tensor& scale, const at::Tensor& amax,
    std::string_view recipe, std::string_view operand, std::int64_t update) {
  constexpr const char* op = "fp8lab.delayed_update";
  check_same_device(op, "scale", scale, amax_history);
  check_same_device(op, "amax", amax, amax_history);
  auto [history, new_scale] =
      delayed_update_cpu(amax_history.cpu(), scale.cpu(), amax.cpu(), recipe, operand, update);
  return std::make_tuple(history.to(amax_history.device()), new_scale.to(amax_history.device()));
}

}  // namespace fp8lab::python
