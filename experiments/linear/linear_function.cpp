#include "experiments/linear/linear_function.hpp"

#include <torch/csrc/autograd/custom_function.h>
#include <torch/custom_class.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::size_t role_index(Gemm role) { return static_cast<std::size_t>(role); }

// A CUDA tensor's view is in cuda memory: only the backend's resident path reads it.
MemorySpace memory_of(const at::Tensor& t) {
  return t.is_cuda() ? MemorySpace::cuda : MemorySpace::host;
}
ConstMatrix const_view(const at::Tensor& t) {
  return {{t.const_data_ptr<float>(), static_cast<std::size_t>(t.numel())},
          t.size(0),
          t.size(1),
          memory_of(t)};
}
MutableMatrix mutable_view(at::Tensor& t) {
  return {{t.mutable_data_ptr<float>(), static_cast<std::size_t>(t.numel())},
          t.size(0),
          t.size(1),
          memory_of(t)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One quantized operand: on the host (with its quantizer's stats, for a second role that takes it
// as it is: LinearBackend::quantizes_alike), or kept on the device by the backend (tensors on CUDA).
struct QuantizedOperand {
  std::optional<sim::scaling::QuantizeResult> host;
  std::shared_ptr<const ResidentOperand> resident;
};

// One host operand's last measurement in a forward or backward call, for its second
// quantization there (x for fprop and wgrad, W for fprop and dgrad, dy for dgrad and wgrad):
// when that one is of the same tensor, unmodified (its version counter unchanged), and gives the
// same codes, scales and layout, the walk would add the same float64 terms in the same order, so
// its sums are these, bit for bit (per-tensor scaling gives both copies the same codes).
struct MeasuredOperand {
  const c10::TensorImpl* impl = nullptr;
  std::int64_t version = 0;
  sim::QuantizedTensor q;  // what the walk read of the quantization
  sim::scaling::QuantizationSums sums;

  static bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
  // Whether the sums of (x, q) are those held.
  bool holds(const at::Tensor& x, const sim::QuantizedTensor& other) const {
    return impl == x.unsafeGetTensorImpl() && version == x._version() && q.rows == other.rows &&
           q.cols == other.cols && q.format == other.format && q.block_rows == other.block_rows &&
           q.block_cols == other.block_cols && q.rht == other.rht &&
           q.rht_signs == other.rht_signs && q.scale_e8m0 == other.scale_e8m0 &&
           q.scale_e4m3 == other.scale_e4m3 && same_bits(q.scale_inv, other.scale_inv) &&
           same_bits(q.scale, other.scale) && same_bits(q.global_scale, other.global_scale) &&
           q.data == other.data;
  }
  void keep(const at::Tensor& x, const sim::QuantizedTensor& other,
            const sim::scaling::QuantizationSums& measured) {
    impl = x.unsafeGetTensorImpl();
    version = x._version();
    q = other;
    sums = measured;
  }
};

// The statistics of one host quantization of x, through `memo` (may be null).
OperandStats measure_host_operand(const at::Tensor& x, const sim::scaling::QuantizeResult& result,
                                  MeasuredOperand* memo) {
  if (memo != nullptr && memo->holds(x, result.tensor)) {
    return measure_quantization(result, memo->sums);
  }
  const sim::scaling::QuantizationSums sums = quantization_sums_of(const_view(x), result);
  if (memo != nullptr) memo->keep(x, result.tensor, sums);
  return measure_quantization(result, sums);
}

// The statistics and the watch of one host quantization of x as the `tensor` operand of `role`.
void observe_host_operand(const LinearExecution& e, Operand tensor, Gemm role, const at::Tensor& x,
                          const sim::scaling::QuantizeResult& result, MeasuredOperand* memo) {
  if (e.stats && e.measure_operands) {
    e.stats->operand(tensor, role).merge(measure_host_operand(x, result, memo));
  }
  if (e.watch) e.watch->after_quantize(tensor, role, const_view(x), result);
}

// Quantizes one operand and merges its statistics. On CUDA the statistics need x and the
// operand on the host: two blocking copies, only when statistics are kept. `memo`: this tensor's
// other quantization in the same call (MeasuredOperand), or null.
QuantizedOperand quantize_operand(const LinearExecution& e, Operand tensor, Gemm role,
                                  const at::Tensor& x, MeasuredOperand* memo = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  QuantizedOperand operand;
  if (x.is_cuda()) {
    operand.resident = e.backend->quantize_resident(*e.state, tensor, role, const_view(x));
    // On CUDA the watch sees only the operands whose statistics come back to the host anyway.
    if ((e.stats || e.watch) && e.measure_operands) {
      const at::Tensor host_x = x.cpu();
      const auto result = operand.resident->to_host();
      if (e.stats)
        e.stats->operand(tensor, role).merge(measure_quantization(const_view(host_x), result));
      if (e.watch) e.watch->after_quantize(tensor, role, const_view(host_x), result);
    }
  } else {
    operand.host = e.backend->quantize(*e.state, tensor, role, const_view(x));
    observe_host_operand(e, tensor, role, x, *operand.host, memo);
  }
  if (e.stats) e.stats->quantize_seconds += seconds_since(start);
  return operand;
}

// Whether `first`, x's quantization as `tensor` for GEMM `first_role` in this call, serves as its
// quantization for `role` too: a host operand, and the backend says quantizing the unmodified x
// for `role` would give the same bits (LinearBackend::quantizes_alike; every per-tensor scaling,
// about half of the step's quantize time saved). If so, merges its statistics and watch for `role`
// as quantize_operand would have.
bool take_alike(const LinearExecution& e, Operand tensor, Gemm first_role, Gemm role,
                const at::Tensor& x, const QuantizedOperand& first, MeasuredOperand* memo) {
  if (!first.host || !e.backend->quantizes_alike(*e.state, tensor, first_role, role)) return false;
  const auto start = std::chrono::steady_clock::now();
  observe_host_operand(e, tensor, role, x, *first.host, memo);
  if (e.stats) e.stats->quantize_seconds += seconds_since(start);
  return true;
}

// x's quantization as `tensor` for `role`: `first` (its quantization for `first_role` in this
// call, moved out) where take_alike says it serves, else a quantization of its own.
QuantizedOperand take_or_quantize(const LinearExecution& e, Operand tensor, Gemm first_role,
                                  Gemm role, const at::Tensor& x,
                                  std::optional<QuantizedOperand>& first, MeasuredOperand* memo) {
  if (first && take_alike(e, tensor, first_role, role, x, *first, memo)) return std::move(*first);
  return quantize_operand(e, tensor, role, x, memo);
}

// The what-if recipes' statistics of x as the `tensor` operand of `role` (what_if.hpp), on the
// steps whose statistics are kept; a CUDA tensor is copied to the host for them.
void what_if_operand(const LinearExecution& e, Operand tensor, Gemm role, const at::Tensor& x) {
  if (!e.stats || !e.measure_operands || !e.what_if || e.what_if->empty()) return;
  const at::Tensor host_x = x.is_cuda() ? x.cpu() : x;
  measure_what_if(*e.what_if, tensor, role, const_view(host_x), *e.stats);
}

// The probes' RHT measurement of x as the wgrad GEMM's `tensor` operand (rht_operands.hpp); a CUDA
// tensor is copied to the host for it.
void rht_operand(const LinearExecution& e, Operand tensor, const at::Tensor& x) {
  if (!e.rht_probe) return;
  const at::Tensor host_x = x.is_cuda() ? x.cpu() : x;
  e.rht_probe->observe(tensor, const_view(host_x));
}

// One GEMM of a Linear: out = GEMM `role`, FP8 on the quantized operands qa, qb when given, else
// high precision on a, b. Split in three so that the backward pass can run its two GEMMs as one
// parallel region (LinearBackend::run_independent) while the watch and the statistics, which
// depend on the order of calls, stay on the calling thread in the order of the calls.
struct GemmCall {
  Gemm role;
  const QuantizedOperand* qa;  // null: high precision
  const QuantizedOperand* qb;
  const at::Tensor* a;
  const at::Tensor* b;
  at::Tensor* out;
  double seconds = 0.0;  // wall time of the backend call
};

// Before the call: the watch scans a high-precision GEMM's host operands.
void check_operands(const LinearExecution& e, const GemmCall& g) {
  if (g.qa != nullptr || !e.watch || g.a->is_cuda()) return;
  const sim::scaling::GemmOperands operands = sim::scaling::gemm_operands(g.role);
  e.watch->check_operand(operands.a, g.role, const_view(*g.a));
  e.watch->check_operand(operands.b, g.role, const_view(*g.b));
}

// The backend call itself, on `backend` (e.backend, or the part of it run_independent lends).
void execute(const LinearBackend& backend, const LinearExecution& e, GemmCall& g) {
  const auto start = std::chrono::steady_clock::now();
  if (g.qa != nullptr) {
    const recipes::Accumulation accumulation = g.role == Gemm::kFprop   ? e.accumulation.fprop
                                               : g.role == Gemm::kDgrad ? e.accumulation.dgrad
                                                                        : e.accumulation.wgrad;
    if (g.qa->resident) {
      backend.gemm_resident(g.role, *g.qa->resident, *g.qb->resident, accumulation,
                            mutable_view(*g.out));
    } else {
      backend.gemm(g.role, g.qa->host->tensor, g.qb->host->tensor, accumulation,
                   mutable_view(*g.out));
    }
  } else {
    backend.high_precision_gemm(g.role, const_view(*g.a), const_view(*g.b), e.high_precision,
                                mutable_view(*g.out));
  }
  g.seconds = seconds_since(start);
}

// After the call: its count and seconds.
void count(const LinearExecution& e, const GemmCall& g) {
  if (!e.stats) return;
  const std::size_t r = role_index(g.role);
  (g.qa != nullptr ? e.stats->fp8_gemms : e.stats->high_precision_gemms)[r] += 1;
  e.stats->gemm_seconds[r] += g.seconds;
}

void run_gemm(const LinearExecution& e, Gemm role, const QuantizedOperand* qa,
              const QuantizedOperand* qb, const at::Tensor& a, const at::Tensor& b,
              at::Tensor& out) {
  GemmCall g{role, qa, qb, &a, &b, &out};
  check_operands(e, g);
  execute(*e.backend, e, g);
  count(e, g);
}

// A copy of t with the per-step null's noise added as the `tensor` operand of `role`
// (operand_noise.hpp), on t's device; noise is applied on the host.
at::Tensor with_noise(const LinearExecution& e, Operand tensor, Gemm role, const at::Tensor& t) {
  at::Tensor host = t.to(at::kCPU, at::kFloat, /*non_blocking=*/false, /*copy=*/true).contiguous();
  e.noise->perturb(tensor, role,
                   {host.mutable_data_ptr<float>(), static_cast<std::size_t>(host.numel())},
                   host.size(0), host.size(1));
  return host.to(t.device());
}

// The test-only fault of non_finite.hpp: a copy of t with one NaN at its middle element.
at::Tensor with_injected_nan(const at::Tensor& t) {
  at::Tensor poisoned = t.clone();
  poisoned.view({-1})[poisoned.numel() / 2].fill_(std::numeric_limits<float>::quiet_NaN());
  return poisoned;
}

// One backward GEMM (dgrad: dy x W into dx; wgrad: dy x x into dW): its what-if rows of dy, its
// output, and its call, quantized (dy now, `other` from forward's FP8 copy), with the per-step
// null's noise, or in high precision. `held` keeps the operands the call points to alive;
// dy_measured: dy's measurement shared by the two calls (MeasuredOperand); dy_first: dy's
// quantization for the call before (dgrad's, for wgrad), taken when take_alike says so, or null.
struct BackwardOperands {
  std::optional<QuantizedOperand> dy_quantized;
  at::Tensor dy_noisy, other_noisy;
};
void add_backward_gemm(const LinearExecution& e, Gemm role, const at::Tensor& dy,
                       Operand other_operand, const at::Tensor& other,
                       const std::optional<QuantizedOperand>& other_quantized,
                       const at::Tensor& out_like, at::Tensor& out, BackwardOperands& held,
                       std::vector<GemmCall>& gemms, MeasuredOperand* dy_measured,
                       const QuantizedOperand* dy_first = nullptr) {
  what_if_operand(e, Operand::kGradOutput, role, dy);
  out = at::empty_like(out_like);
  if (e.state && e.quantized[role_index(role)]) {
    if (!other_quantized) {
      std::string what = "Fp8Linear: no FP8 copy of ";
      throw std::logic_error(what.append(name(other_operand)).append(" for ").append(name(role)));
    }
    const QuantizedOperand* dy_quantized = dy_first;
    if (dy_first == nullptr ||
        !take_alike(e, Operand::kGradOutput, Gemm::kDgrad, role, dy, *dy_first, dy_measured)) {
      held.dy_quantized = quantize_operand(e, Operand::kGradOutput, role, dy, dy_measured);
      dy_quantized = &*held.dy_quantized;
    }
    gemms.push_back({role, dy_quantized, &*other_quantized, &dy, &other, &out});
  } else if (e.noise) {
    held.dy_noisy = with_noise(e, Operand::kGradOutput, role, dy);
    held.other_noisy = with_noise(e, other_operand, role, other);
    gemms.push_back({role, nullptr, nullptr, &held.dy_noisy, &held.other_noisy, &out});
  } else {
    gemms.push_back({role, nullptr, nullptr, &dy, &other, &out});
  }
  check_operands(e, gemms.back());
}

// What forward leaves for backward besides the saved tensors: the execution and the operands
// quantized in forward with the forward scales (TE keeps them, te-accelerate.md §2.5 step 3).
// backward_override dequantized keeps instead the fprop GEMM's codes, dequantized.
struct SavedLinear : torch::CustomClassHolder {
  LinearExecution execution;
  std::optional<QuantizedOperand> input_for_wgrad;
  std::optional<QuantizedOperand> weight_for_dgrad;
  at::Tensor input_dequantized;   // defined when execution.dequantized[wgrad]
  at::Tensor weight_dequantized;  // defined when execution.dequantized[dgrad]
};

// The fprop operand `q` of `tensor`, dequantized into a tensor shaped as `like`, on its device
// (backward_override dequantized: TE's linear.py dequantizes the forward's rowwise codes for dgrad
// and wgrad): sim::scaling::dequantize of host codes, or the backend's dequantize_resident of
// codes it keeps on the device.
at::Tensor dequantized(const LinearExecution& e, const QuantizedOperand& q, Operand tensor,
                       const at::Tensor& like) {
  at::Tensor out = at::empty_like(like);
  if (q.resident) {
    e.backend->dequantize_resident(*q.resident, mutable_view(out));
    return out;
  }
  if (q.host->tensor.rht) {
    throw std::logic_error(std::string("Fp8Linear: the fprop codes of the ") +
                           std::string(name(tensor)) +
                           " are of its RHT, which backward_override dequantized cannot read");
  }
  const std::vector<float> values = sim::scaling::dequantize(q.host->tensor);
  std::copy(values.begin(), values.end(), out.mutable_data_ptr<float>());
  return out;
}

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const at::Tensor& bias, const LinearExecution& e, bool has_bias,
                            bool dgrad_follows, bool wgrad_follows) {
    const at::Tensor x = e.watch && e.watch->inject_now(false) ? with_injected_nan(input) : input;
    const bool fp8 = e.state != nullptr;
    auto saved = c10::make_intrusive<SavedLinear>();
    saved->execution = e;

    what_if_operand(e, Operand::kInput, Gemm::kFprop, x);
    what_if_operand(e, Operand::kWeight, Gemm::kFprop, weight);
    if (wgrad_follows) what_if_operand(e, Operand::kInput, Gemm::kWgrad, x);
    if (wgrad_follows) rht_operand(e, Operand::kInput, x);
    if (dgrad_follows) what_if_operand(e, Operand::kWeight, Gemm::kDgrad, weight);
    at::Tensor y = at::empty({x.size(0), weight.size(0)}, x.options());
    MeasuredOperand x_measured, w_measured;  // each tensor's two quantizations in this call
    std::optional<QuantizedOperand> qx, qw;  // the fprop GEMM's, when it is FP8
    if (fp8 && e.quantized[role_index(Gemm::kFprop)]) {
      qx = quantize_operand(e, Operand::kInput, Gemm::kFprop, x, &x_measured);
      qw = quantize_operand(e, Operand::kWeight, Gemm::kFprop, weight, &w_measured);
      run_gemm(e, Gemm::kFprop, &*qx, &*qw, x, weight, y);
      if (wgrad_follows && e.dequantized[role_index(Gemm::kWgrad)]) {
        saved->input_dequantized = dequantized(e, *qx, Operand::kInput, x);
      }
      if (dgrad_follows && e.dequantized[role_index(Gemm::kDgrad)]) {
        saved->weight_dequantized = dequantized(e, *qw, Operand::kWeight, weight);
      }
    } else if (e.noise) {
      const at::Tensor noisy_x = with_noise(e, Operand::kInput, Gemm::kFprop, x);
      const at::Tensor noisy_w = with_noise(e, Operand::kWeight, Gemm::kFprop, weight);
      run_gemm(e, Gemm::kFprop, nullptr, nullptr, noisy_x, noisy_w, y);
    } else {
      run_gemm(e, Gemm::kFprop, nullptr, nullptr, x, weight, y);
    }
    if (has_bias) y.add_(bias);  // elementwise fp32 RN, independent of order

    // The backward GEMMs' FP8 copies of x and W come from forward, with the forward scales:
    // the fprop GEMM's own where they are alike (take_alike), else quantized for their GEMM.
    if (fp8) {
      if (wgrad_follows && e.quantized[role_index(Gemm::kWgrad)]) {
        saved->input_for_wgrad =
            take_or_quantize(e, Operand::kInput, Gemm::kFprop, Gemm::kWgrad, x, qx, &x_measured);
      }
      if (dgrad_follows && e.quantized[role_index(Gemm::kDgrad)]) {
        saved->weight_for_dgrad = take_or_quantize(e, Operand::kWeight, Gemm::kFprop, Gemm::kDgrad,
                                                   weight, qw, &w_measured);
      }
    }
    ctx->save_for_backward({x, weight});
    ctx->saved_data["linear"] = c10::IValue::make_capsule(std::move(saved));
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved_tensors = ctx->get_saved_variables();
    const at::Tensor& x = saved_tensors[0];
    const at::Tensor& weight = saved_tensors[1];
    const auto capsule = ctx->saved_data["linear"].toCapsule();
    const auto& saved = static_cast<const SavedLinear&>(*capsule);
    const LinearExecution& e = saved.execution;
    at::Tensor dy = grad_outputs[0].to(at::kFloat).contiguous();
    if (e.watch && e.watch->inject_now(true)) dy = with_injected_nan(dy);

    // dgrad and wgrad: operands quantized (and watched and measured) in the order dgrad, wgrad,
    // then both GEMMs as one parallel region; their counts follow in the same order.
    at::Tensor dx, dw, db;
    BackwardOperands dgrad_operands, wgrad_operands;
    MeasuredOperand dy_measured;
    std::vector<GemmCall> gemms;
    gemms.reserve(2);
    if (ctx->needs_input_grad(0)) {
      const at::Tensor& w_read = saved.weight_dequantized.defined() ? saved.weight_dequantized
                                                                    : weight;
      add_backward_gemm(e, Gemm::kDgrad, dy, Operand::kWeight, w_read, saved.weight_for_dgrad, x,
                        dx, dgrad_operands, gemms, &dy_measured);
    }
    if (ctx->needs_input_grad(1)) {
      rht_operand(e, Operand::kGradOutput, dy);
      const at::Tensor& x_read = saved.input_dequantized.defined() ? saved.input_dequantized : x;
      const QuantizedOperand* dy_first = dgrad_operands.dy_quantized ? &*dgrad_operands.dy_quantized
                                                                     : nullptr;
      add_backward_gemm(e, Gemm::kWgrad, dy, Operand::kInput, x_read, saved.input_for_wgrad, weight,
                        dw, wgrad_operands, gemms, &dy_measured, dy_first);
    }
    std::vector<LinearBackend::Call> calls;
    for (GemmCall& g : gemms) {
      calls.push_back([&e, &g](const LinearBackend& backend) { execute(backend, e, g); });
    }
    e.backend->run_independent(calls);
    for (const GemmCall& g : gemms) count(e, g);
    if (ctx->needs_input_grad(2)) {
      // Σ over rows in increasing order, fp32: the same bits for every backend and thread count.
      // On the host: a CUDA dy is copied over and the sum copied back (LibTorch's CUDA sum
      // reduces in another order).
      const at::Tensor dy_host = dy.is_cuda() ? dy.cpu() : dy;
      db = at::zeros({dy.size(1)}, dy_host.options());
      const float* g = dy_host.const_data_ptr<float>();
      float* out = db.mutable_data_ptr<float>();
      for (std::int64_t m = 0; m < dy.size(0); ++m) {
        for (std::int64_t n = 0; n < dy.size(1); ++n) out[n] += g[m * dy.size(1) + n];
      }
      if (dy.is_cuda()) db = db.to(dy.device());
    }
    // TE: the first FP8 module of the region, at the end of its backward (the last FP8 backward
    // of the step), updates every module's backward scales (te-accelerate.md §2.5 step 3).
    if (e.first_in_region && e.record) e.record->end_backward();
    return {dx, dw, db, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

void check_float_matrix(const char* argument, const at::Tensor& t, std::int64_t dims) {
  if (t.scalar_type() != at::kFloat || t.dim() != dims) {
    throw std::invalid_argument(std::string("run_linear: ") + argument + " must be a " +
                                std::to_string(dims) + "-D float32 tensor, got " +
                                std::to_string(t.dim()) + "-D " +
                                std::string(c10::toString(t.scalar_type())));
  }
}

}  // namespace

at::Tensor run_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                      LinearExecution execution) {
  check_float_matrix("input", x, 2);
  check_float_matrix("weight", weight, 2);
  if (bias.defined()) check_float_matrix("bias", bias, 1);
  if (x.size(1) != weight.size(1) || (bias.defined() && bias.size(0) != weight.size(0))) {
    throw std::invalid_argument(
        "run_linear: shapes do not match: input [" + std::to_string(x.size(0)) + ", " +
        std::to_string(x.size(1)) + "], weight [" + std::to_string(weight.size(0)) + ", " +
        std::to_string(weight.size(1)) + "]" +
        (bias.defined() ? ", bias [" + std::to_string(bias.size(0)) + "]" : std::string()));
  }
  if (!execution.backend) throw std::invalid_argument("run_linear: no backend");
  if (weight.device() != x.device() || (bias.defined() && bias.device() != x.device())) {
    throw std::invalid_argument(
        "run_linear: input on " + x.device().str() + ", weight on " + weight.device().str() +
        (bias.defined() ? ", bias on " + bias.device().str() : "") + "; all must be on one device");
  }
  if (x.is_cuda() && !execution.backend->accepts(MemorySpace::cuda)) {
    throw std::invalid_argument("run_linear: tensors on " + x.device().str() + ", but backend " +
                                std::string(execution.backend->name()) +
                                " takes host memory only; keep the model on the CPU or use the "
                                "cuda backend");
  }
  // Decided here: autograd runs Function::forward with grad mode off. As TE, only the copies a
  // backward GEMM will read are quantized (dgrad needs x's gradient, wgrad W's).
  // autograd::Function takes no undefined tensor: a Linear without bias passes an empty one.
  const bool grad = at::GradMode::is_enabled();
  const bool has_bias = bias.defined();
  if (!grad) execution.noise = nullptr;  // the per-step null perturbs training steps, not evals
  return LinearFunction::apply(x.contiguous(), weight.contiguous(),
                               has_bias ? bias : at::empty({0}, weight.options()), execution,
                               has_bias, grad && x.requires_grad(), grad && weight.requires_grad());
}

}  // namespace fp8lab::experiments
