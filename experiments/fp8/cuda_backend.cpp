#include "experiments/fp8/cuda_backend.hpp"

#include <stdexcept>

#include "experiments/fp8/sim_backend.hpp"

namespace fp8lab::experiments {

void validate(const BackendChoice& choice) {
  if (choice.shadow_every < 0) {
    throw std::invalid_argument("--shadow-every = " + std::to_string(choice.shadow_every) +
                                "; accepted: 0 (off) or N >= 1");
  }
  if (choice.name != "sim" && choice.name != "cuda") {
    throw std::invalid_argument("--backend = '" + choice.name + "'; accepted: sim, cuda");
  }
}

std::shared_ptr<const LinearBackend> make_backend(const BackendChoice& choice) {
  validate(choice);
  if (choice.name == "sim") {
    auto sim = std::make_shared<const SimBackend>(SimBackendOptions{.threads = 1});
    if (choice.shadow_every == 0) return sim;
    // sim watched by sim: rehearses the check's plumbing (records, sweeps) without a GPU.
    return std::make_shared<const ShadowCheckedBackend>(sim, &sim_delayed_snapshot,
                                                        ShadowOptions{.every = choice.shadow_every});
  }
#if FP8LAB_HAVE_CUDA
  auto cuda = std::make_shared<const CudaBackend>();
  if (choice.shadow_every == 0) return cuda;
  return std::make_shared<const ShadowCheckedBackend>(cuda, &CudaBackend::delayed_snapshot,
                                                      ShadowOptions{.every = choice.shadow_every});
#else
  throw std::runtime_error("--backend cuda: this fp8lab was built without CUDA (FP8LAB_WITH_CUDA)");
#endif
}

}  // namespace fp8lab::experiments

// The backend itself needs CUDA: compiled to nothing in a build without gpu/.
#if FP8LAB_HAVE_CUDA

#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gemm/gemm.hpp"
#include "gpu/quantize.hpp"
#include "gpu/scaling/blocked.hpp"
#include "gpu/scaling/delayed.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/gemm_axes.hpp"
#include "sim/scaling/rowwise.hpp"

namespace fp8lab::experiments {
namespace {

namespace sc = sim::scaling;
using gpu::DeviceBuffer;

// One pass of delayed scaling on the device: history [len][slots], scale [slots] (every scale 1.0,
// histories 0 at the start, as sim::scaling::DelayedScalingState).
struct DevicePass {
  DevicePass(std::int64_t slots_, std::int64_t len_)
      : slots(slots_),
        len(len_),
        history(static_cast<std::size_t>(slots_ * len_)),
        scale(std::vector<float>(static_cast<std::size_t>(slots_), 1.0f)) {
    history.zero();
  }
  std::int64_t slots;
  std::int64_t len;
  DeviceBuffer<float> history;
  DeviceBuffer<float> scale;
  std::int64_t updates = 0;
};

class CudaLinearState final : public LinearScalingState {
 public:
  explicit CudaLinearState(const recipes::Recipe& r) : recipe(r) {
    if (r.scaling == recipes::Scaling::delayed) {
      config = delayed_config(r);  // validates
      forward.emplace(2, config.amax_history_len);
      backward.emplace(1, config.amax_history_len);
    }
  }
  recipes::Recipe recipe;
  sc::DelayedScalingConfig config;
  std::optional<DevicePass> forward;   // slots input (0), weight (1)
  std::optional<DevicePass> backward;  // slot grad_output (0)
};

const CudaLinearState& cuda_state(const LinearScalingState& state) {
  const auto* s = dynamic_cast<const CudaLinearState*>(&state);
  if (s == nullptr) {
    throw std::invalid_argument("CudaBackend: the scaling state was made by another backend");
  }
  return *s;
}
CudaLinearState& cuda_state(LinearScalingState& state) {
  return const_cast<CudaLinearState&>(cuda_state(std::as_const(state)));
}

gpu::scaling::MxMode to_gpu(recipes::MxScaleMode mode) {
  switch (mode) {
    case recipes::MxScaleMode::te: return gpu::scaling::MxMode::kTe;
    case recipes::MxScaleMode::floor: return gpu::scaling::MxMode::kFloor;
    case recipes::MxScaleMode::ceil: return gpu::scaling::MxMode::kCeil;
    case recipes::MxScaleMode::even: return gpu::scaling::MxMode::kEven;
    case recipes::MxScaleMode::rceil: break;
  }
  return gpu::scaling::MxMode::kRceil;
}

// The kernels write M x N values (M, N: the operands' dimensions other than K): `out` must be
// that shape, or they would write past it.
void check_output_shape(MutableMatrix out, std::int64_t a_rows, std::int64_t a_cols, bool a_k,
                        std::int64_t b_rows, std::int64_t b_cols, bool b_k) {
  const std::int64_t m = a_k ? a_rows : a_cols, n = b_k ? b_rows : b_cols;
  if (out.rows != m || out.cols != n) {
    throw std::invalid_argument("CudaBackend: output is " + std::to_string(out.rows) + " x " +
                                std::to_string(out.cols) + "; the GEMM's operands give " +
                                std::to_string(m) + " x " + std::to_string(n));
  }
}

template <typename T>
std::vector<T> to_vector(std::span<const T> s) {
  return std::vector<T>(s.begin(), s.end());
}

sim::QuantizeStats to_host(const gpu::DeviceQuantizeStats& d) {
  sim::QuantizeStats s;
  s.amax = d.amax;
  s.count = d.count;
  s.saturated = d.saturated;
  s.underflowed = d.underflowed;
  s.nan = d.nan;
  return s;
}

// Device outputs of one quantize: codes, one scale_inv / scale / e8m0 per block, statistics.
struct DeviceQuantized {
  DeviceQuantized(std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                  std::int64_t block_cols)
      : codes(static_cast<std::size_t>(rows * cols)),
        scale_inv(blocks(rows, cols, block_rows, block_cols)),
        scale(blocks(rows, cols, block_rows, block_cols)),
        e8m0(blocks(rows, cols, block_rows, block_cols)),
        stats(1) {
    stats.zero();
  }
  static std::size_t blocks(std::int64_t rows, std::int64_t cols, std::int64_t br,
                            std::int64_t bc) {
    return static_cast<std::size_t>(((rows + br - 1) / br) * ((cols + bc - 1) / bc));
  }
  gpu::scaling::BlockedOutputs outputs() {
    return {codes.get(), scale_inv.get(), scale.get(), e8m0.get(), stats.get()};
  }
  // The host result in sim's layout; `with_e8m0` for MX (sim fills scale_e8m0 only there).
  sc::QuantizeResult download(std::int64_t rows, std::int64_t cols, sim::Format format,
                              std::int64_t br, std::int64_t bc, bool with_e8m0) const {
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    sc::QuantizeResult r;
    sim::QuantizedTensor& t = r.tensor;
    t.rows = rows;
    t.cols = cols;
    t.format = format;
    t.block_rows = br;
    t.block_cols = bc;
    t.data = codes.download();
    t.scale_inv = scale_inv.download();
    t.scale = scale.download();
    if (with_e8m0) t.scale_e8m0 = e8m0.download();
    r.stats = to_host(gpu::read_stats(stats.get()));
    return r;
  }
  DeviceBuffer<std::uint8_t> codes;
  DeviceBuffer<float> scale_inv;
  DeviceBuffer<float> scale;
  DeviceBuffer<std::uint8_t> e8m0;
  DeviceBuffer<gpu::DeviceQuantizeStats> stats;
};

// Delayed scaling: the slot's device scale, amax fmax-accumulated into history row 0 by the
// kernel (TE's atomicMaxFloat, te-accelerate.md §2.4); sim::scaling::quantize_per_tensor's layout.
sc::QuantizeResult quantize_delayed(DevicePass& pass, std::int64_t slot, const float* x,
                                    std::int64_t rows, std::int64_t cols, sim::Format format) {
  DeviceQuantized out(rows, cols, rows, cols);
  gpu::QuantizeOutputs q;
  q.codes = out.codes.get();
  q.amax = pass.history.get() + slot;  // H[0][slot]
  q.stats = out.stats.get();
  q.scale_inv = out.scale_inv.get();
  gpu::quantize(x, rows * cols, pass.scale.get() + slot, format, sim::Overflow::kSatFinite, q);
  FP8LAB_CUDA_CHECK(cudaMemcpy(out.scale.get(), pass.scale.get() + slot, sizeof(float),
                               cudaMemcpyDeviceToDevice));
  return out.download(rows, cols, format, rows, cols, false);
}

void update_pass(DevicePass& pass, const sc::DelayedScalingConfig& config, sim::Format format) {
  gpu::scaling::DelayedUpdateGroup g;
  g.history = pass.history.get();
  g.scale = pass.scale.get();
  g.slots = pass.slots;
  g.len = pass.len;
  g.scaled_max = sc::delayed_scaled_max(sc::fp8_max(format), config.margin);
  g.most_recent = config.amax_compute_algo == sc::AmaxComputeAlgo::kMostRecent;
  g.recompute_scale = pass.updates % config.interval == 0;  // as DelayedScalingState::update
  gpu::scaling::delayed_update({g});
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  ++pass.updates;
}

}  // namespace

GpuQuantizePlan plan_quantize(const recipes::Recipe& r, LinearTensor tensor, GemmRole role,
                              std::int64_t rows, std::int64_t cols) {
  using Q = GpuQuantizePlan::Quantizer;
  GpuQuantizePlan plan;
  plan.format = element_format(r, tensor);
  plan.pow2 = r.power_2_scales;
  plan.block_rows = rows;  // per tensor unless a case below says otherwise
  plan.block_cols = cols;
  const sc::ScaleAxis axis = sc::scale_axis(scaling_gemm(role), scaling_operand(tensor));
  plan.rowwise = axis == sc::ScaleAxis::kRowwise;
  switch (r.scaling) {
    case recipes::Scaling::delayed:
      throw std::invalid_argument("plan_quantize: delayed scaling keeps state on the device; "
                                  "CudaBackend::quantize runs it");
    case recipes::Scaling::current:
      plan.quantizer = Q::current_te;
      return plan;
    case recipes::Scaling::tensorwise:
    case recipes::Scaling::rowwise:
    case recipes::Scaling::rowwise_with_gw_hp: {
      // torchao's table picks the granularity; format and power-of-2 come from the recipe, as
      // in SimBackend.
      const sc::TorchaoRecipe recipe = r.scaling == recipes::Scaling::tensorwise
                                           ? sc::TorchaoRecipe::kTensorwise
                                       : r.scaling == recipes::Scaling::rowwise
                                           ? sc::TorchaoRecipe::kRowwise
                                           : sc::TorchaoRecipe::kRowwiseWithGwHp;
      const sc::OperandCast cast =
          sc::torchao_operand_cast(recipe, scaling_gemm(role), scaling_operand(tensor));
      if (cast.scaling == sc::OperandScaling::kTensorwise) {
        plan.quantizer = Q::tensorwise_torchao;
        return plan;
      }
      if (cast.scaling == sc::OperandScaling::kAxiswise) {
        plan.quantizer = Q::axiswise_torchao;
        plan.block_rows = plan.rowwise ? 1 : rows;
        plan.block_cols = plan.rowwise ? cols : 1;
        return plan;
      }
      throw std::invalid_argument("CudaBackend: " + std::string(recipes::name(r.scaling)) +
                                  " runs the " + std::string(experiments::name(role)) +
                                  " GEMM in high precision; its operands are not quantized");
    }
    case recipes::Scaling::block: {
      // As sim::scaling::quantize_block_operand: weight 128x128, the others 1x128 / 128x1 along
      // the GEMM's K.
      const sc::BlockShape b = tensor == LinearTensor::weight ? sc::kBlock128x128
                               : plan.rowwise                 ? sc::kBlock1x128
                                                              : sc::kBlock128x1;
      plan.quantizer = Q::block_te;
      plan.block_rows = b.rows;
      plan.block_cols = b.cols;
      return plan;
    }
    case recipes::Scaling::mxfp8:
      // As sim::scaling::quantize_mx_operand without weight_2d: 1x32 / 32x1 along the GEMM's K.
      plan.quantizer = Q::mx;
      plan.block_rows = plan.rowwise ? 1 : 32;
      plan.block_cols = plan.rowwise ? 32 : 1;
      plan.mx_mode = to_gpu(r.mx_scale_mode);
      return plan;
  }
  throw std::invalid_argument("CudaBackend: scaling " +
                              std::to_string(static_cast<int>(r.scaling)) +
                              " has no GPU quantizer");
}

void run_quantize_plan(const GpuQuantizePlan& p, const float* x, std::int64_t rows,
                       std::int64_t cols, const gpu::scaling::BlockedOutputs& o, bool on_host) {
  namespace gs = gpu::scaling;
  namespace twin = gpu::scaling::host_twin;
  using Q = GpuQuantizePlan::Quantizer;
  // Block scaling: fp32 input (value_for_inf = FLT_MAX); amax_epsilon 0 everywhere, as SimBackend.
  const float value_for_inf = sc::block_value_for_inf(sim::Format::FP32);
  switch (p.quantizer) {
    case Q::current_te:
      return on_host ? twin::quantize_current_te(x, rows, cols, p.format, p.pow2, 0.0f, o)
                     : gs::quantize_current_te(x, rows, cols, p.format, p.pow2, 0.0f, o);
    case Q::tensorwise_torchao:
      return on_host ? twin::quantize_tensorwise_torchao(x, rows, cols, p.format, p.pow2, o)
                     : gs::quantize_tensorwise_torchao(x, rows, cols, p.format, p.pow2, o);
    case Q::axiswise_torchao:
      return on_host
                 ? twin::quantize_axiswise_torchao(x, rows, cols, p.rowwise, p.format, p.pow2, o)
                 : gs::quantize_axiswise_torchao(x, rows, cols, p.rowwise, p.format, p.pow2, o);
    case Q::block_te:
      return on_host ? twin::quantize_block_te(x, rows, cols, p.block_rows, p.block_cols,
                                               p.format, p.pow2, 0.0f, value_for_inf, o)
                     : gs::quantize_block_te(x, rows, cols, p.block_rows, p.block_cols, p.format,
                                             p.pow2, 0.0f, value_for_inf, o);
    case Q::mx:
      return on_host ? twin::quantize_mx(x, rows, cols, p.block_rows, p.block_cols, p.format,
                                         p.mx_mode, o)
                     : gs::quantize_mx(x, rows, cols, p.block_rows, p.block_cols, p.format,
                                       p.mx_mode, o);
  }
}

gpu::GemmModel gemm_model(recipes::Accumulation accumulation) {
  switch (accumulation) {
    case recipes::Accumulation::fp32_seq: return gpu::GemmModel::kFp32Seq;
    case recipes::Accumulation::hopper_split: return gpu::GemmModel::kHopperSplitAccumulator;
    case recipes::Accumulation::hopper_fast: return gpu::GemmModel::kHopperFastAccum;
    case recipes::Accumulation::exact: break;
  }
  throw std::invalid_argument(
      "CudaBackend: accumulation `" + std::string(recipes::name(accumulation)) +
      "` has no GPU kernel (gpu/gemm offers fp32_seq, hopper_split, hopper_fast); run this recipe "
      "on the sim backend");
}

std::pair<bool, bool> gemm_k_is_cols(GemmRole role) {
  switch (role) {
    case GemmRole::fprop: return {true, true};
    case GemmRole::dgrad: return {true, false};
    case GemmRole::wgrad: break;
  }
  return {false, false};
}

CudaBackend::CudaBackend() {
  const gpu::DeviceInfo device = gpu::query_device();
  if (!device.available) {
    throw std::runtime_error("CudaBackend: " + device.reason +
                             "; use --backend sim");
  }
}

std::unique_ptr<LinearScalingState> CudaBackend::make_state(const recipes::Recipe& recipe) const {
  return std::make_unique<CudaLinearState>(recipe);
}

sc::QuantizeResult CudaBackend::quantize(LinearScalingState& state, LinearTensor tensor,
                                         GemmRole role, ConstMatrix x) const {
  check_matrix("CudaBackend", "operand", x.data.size(), x.rows, x.cols);
  CudaLinearState& s = cuda_state(state);
  const recipes::Recipe& r = s.recipe;
  const sim::Format format = element_format(r, tensor);
  // sim's argument checks (rows, cols >= 1; E4M3 / E5M2), so both backends refuse the same input.
  sc::check_tensor_arguments("CudaBackend::quantize", x.data.size(), x.rows, x.cols, format);
  const DeviceBuffer<float> dx(to_vector(x.data));
  if (r.scaling == recipes::Scaling::delayed) {
    if (tensor == LinearTensor::grad_output) {
      return quantize_delayed(*s.backward, 0, dx.get(), x.rows, x.cols, format);
    }
    return quantize_delayed(*s.forward, tensor == LinearTensor::input ? 0 : 1, dx.get(), x.rows,
                            x.cols, format);
  }
  const GpuQuantizePlan plan = plan_quantize(r, tensor, role, x.rows, x.cols);
  DeviceQuantized out(x.rows, x.cols, plan.block_rows, plan.block_cols);
  run_quantize_plan(plan, dx.get(), x.rows, x.cols, out.outputs(), false);
  return out.download(x.rows, x.cols, plan.format, plan.block_rows, plan.block_cols,
                      plan.quantizer == GpuQuantizePlan::Quantizer::mx);
}

void CudaBackend::gemm(GemmRole role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
                       recipes::Accumulation accumulation, MutableMatrix out) const {
  check_matrix("CudaBackend", "output", out.data.size(), out.rows, out.cols);
  gpu::DeviceGemmOptions options;
  options.model = gemm_model(accumulation);
  const auto [a_k, b_k] = gemm_k_is_cols(role);
  check_output_shape(out, a.rows, a.cols, a_k, b.rows, b.cols, b_k);
  const DeviceBuffer<std::uint8_t> a_codes(a.data), b_codes(b.data);
  const DeviceBuffer<float> a_scales(a.scale_inv), b_scales(b.scale_inv);
  const gpu::DeviceGemmOperand da{a_codes.get(), a_scales.get(), a.rows, a.cols,
                                  a.block_rows,  a.block_cols,   a.format, a_k};
  const gpu::DeviceGemmOperand db{b_codes.get(), b_scales.get(), b.rows, b.cols,
                                  b.block_rows,  b.block_cols,   b.format, b_k};
  DeviceBuffer<float> d_out(out.data.size());
  gpu::gemm(da, db, options, d_out.get());
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> host = d_out.download();
  std::memcpy(out.data.data(), host.data(), host.size() * sizeof(float));
}

void CudaBackend::high_precision_gemm(GemmRole role, ConstMatrix a, ConstMatrix b,
                                      HighPrecision precision, MutableMatrix out) const {
  check_matrix("CudaBackend", "operand a", a.data.size(), a.rows, a.cols);
  check_matrix("CudaBackend", "operand b", b.data.size(), b.rows, b.cols);
  check_matrix("CudaBackend", "output", out.data.size(), out.rows, out.cols);
  const auto [a_k, b_k] = gemm_k_is_cols(role);
  check_output_shape(out, a.rows, a.cols, a_k, b.rows, b.cols, b_k);
  const DeviceBuffer<float> da(to_vector(a.data)), db(to_vector(b.data));
  DeviceBuffer<float> d_out(out.data.size());
  gpu::DenseGemmOptions options;
  options.round_operands_to_bf16 = precision == HighPrecision::bf16;
  gpu::high_precision_gemm({da.get(), a.rows, a.cols, a_k}, {db.get(), b.rows, b.cols, b_k},
                           options, d_out.get());
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> host = d_out.download();
  std::memcpy(out.data.data(), host.data(), host.size() * sizeof(float));
}

void CudaBackend::end_forward(LinearScalingState& state) const {
  CudaLinearState& s = cuda_state(state);
  if (s.forward) update_pass(*s.forward, s.config, element_format(s.recipe, LinearTensor::input));
}

void CudaBackend::end_backward(LinearScalingState& state) const {
  CudaLinearState& s = cuda_state(state);
  if (s.backward) {
    update_pass(*s.backward, s.config, element_format(s.recipe, LinearTensor::grad_output));
  }
}

DelayedStateSnapshot CudaBackend::delayed_snapshot(const LinearScalingState& state) {
  const CudaLinearState& s = cuda_state(state);
  DelayedStateSnapshot snap;
  if (!s.forward) return snap;
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  snap.history_len = s.config.amax_history_len;
  snap.forward_history = s.forward->history.download();
  snap.forward_scale = s.forward->scale.download();
  snap.backward_history = s.backward->history.download();
  snap.backward_scale = s.backward->scale.download();
  snap.forward_updates = s.forward->updates;
  snap.backward_updates = s.backward->updates;
  return snap;
}

}  // namespace fp8lab::experiments

#endif  // FP8LAB_HAVE_CUDA
