#include "experiments/linear/cuda_backend.hpp"

#include <stdexcept>

#include "experiments/linear/sim_backend.hpp"

namespace fp8lab::experiments {

void validate(const BackendChoice& choice) {
  if (choice.shadow_every < 0) {
    throw std::invalid_argument("--shadow-every = " + std::to_string(choice.shadow_every) +
                                "; accepted: 0 (off) or N >= 1");
  }
  if (choice.threads < 1 || choice.threads > kMaxRunThreads) {
    throw std::invalid_argument("--threads = " + std::to_string(choice.threads) +
                                "; accepted: a whole number from 1 to " +
                                std::to_string(kMaxRunThreads));
  }
  if (choice.name != "sim" && choice.name != "cuda" && choice.name != "cuda-staged") {
    throw std::invalid_argument("--backend = '" + choice.name +
                                "'; accepted: sim, cuda, cuda-staged");
  }
}

std::shared_ptr<const LinearBackend> make_backend(const BackendChoice& choice) {
  validate(choice);
  if (choice.name == "sim") {
    auto sim = std::make_shared<const SimBackend>(
        SimBackendOptions{.threads = choice.threads, .run_seed = choice.run_seed});
    if (choice.shadow_every == 0) return sim;
    // sim watched by sim: rehearses the check's plumbing (records, sweeps) without a GPU.
    return std::make_shared<const ShadowCheckedBackend>(
        sim, &sim_delayed_snapshot, ShadowOptions{.every = choice.shadow_every});
  }
#if FP8LAB_HAVE_CUDA
  auto cuda = std::make_shared<const CudaBackend>();
  if (choice.shadow_every == 0) return cuda;
  return std::make_shared<const ShadowCheckedBackend>(cuda, &CudaBackend::delayed_snapshot,
                                                      ShadowOptions{.every = choice.shadow_every});
#else
  throw std::runtime_error("--backend " + choice.name +
                           ": this fp8lab was built without CUDA (FP8LAB_WITH_CUDA)");
#endif
}

}  // namespace fp8lab::experiments

// The backend itself needs CUDA: compiled to nothing in a build without gpu/.
#if FP8LAB_HAVE_CUDA

#include <array>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAStream.h>

#include "experiments/linear/cuda_staging.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/dequantize.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gemm/gemm.hpp"
#include "gpu/quantize.hpp"
#include "gpu/scaling/blocked.hpp"
#include "gpu/scaling/delayed.hpp"
#include "recipes/lowering.hpp"
#include "recipes/role_rules.hpp"
#include "sim/scaling/delayed.hpp"

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
    if (const auto delayed = recipes::delayed_scaling(r)) {  // validated
      config = *delayed;
      forward.emplace(2, config.amax_history_len);
      backward.emplace(1, config.amax_history_len);
      // Made on the legacy default stream; every later use is on torch's current stream.
      FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
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

// Every call runs on torch's current CUDA stream (the legacy default stream unless the caller
// set another), in order with the LibTorch kernels around it.
cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

// host -> pinned slice -> device slice, queued on `stream`.
void upload(void* device, std::byte* pinned, const void* host, std::size_t bytes,
            cudaStream_t stream) {
  if (bytes == 0) return;
  std::memcpy(pinned, host, bytes);
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(device, pinned, bytes, cudaMemcpyHostToDevice, stream));
}
// device -> host, queued on `stream`; read it after the stream's synchronization.
void queue_download(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
}
template <typename T>
std::vector<T> from_pinned(const std::byte* pinned, std::size_t count) {
  std::vector<T> host(count);
  if (count > 0) std::memcpy(host.data(), pinned, count * sizeof(T));
  return host;
}
template <typename T>
std::size_t bytes_of(std::span<const T> s) {
  return s.size() * sizeof(T);
}

sim::QuantizeStats host_stats(const gpu::DeviceQuantizeStats& d) {
  sim::QuantizeStats s;
  s.amax = d.amax;
  s.count = d.count;
  s.saturated = d.saturated;
  s.underflowed = d.underflowed;
  s.nan = d.nan;
  return s;
}

// One quantize of x [rows, cols] into one scale per block_rows x block_cols block: x uploaded
// into the device slice, the outputs' device slices (statistics zeroed) and their pinned
// download slices. The caller holds staging.mutex from construction until finish() returns.
class QuantizeCall {
 public:
  QuantizeCall(CudaStaging& staging, ConstMatrix x, std::int64_t block_rows,
               std::int64_t block_cols, cudaStream_t stream)
      : stream_(stream),
        rows_(x.rows),
        cols_(x.cols),
        block_rows_(block_rows),
        block_cols_(block_cols) {
    const std::size_t n = x.data.size();
    const std::size_t blocks = static_cast<std::size_t>(((rows_ + block_rows - 1) / block_rows) *
                                                        ((cols_ + block_cols - 1) / block_cols));
    sizes_ = {n, blocks * sizeof(float), blocks * sizeof(float), blocks,
              sizeof(gpu::DeviceQuantizeStats)};
    const auto d = staging.device.slices(
        {n * sizeof(float), sizes_[0], sizes_[1], sizes_[2], sizes_[3], sizes_[4]});
    x_ = reinterpret_cast<const float*>(d[0]);
    for (std::size_t i = 0; i < kOutputs; ++i) device_[i] = d[i + 1];
    const auto pinned =
        staging.download.slices({sizes_[0], sizes_[1], sizes_[2], sizes_[3], sizes_[4]});
    for (std::size_t i = 0; i < kOutputs; ++i) pinned_[i] = pinned[i];
    upload(d[0], staging.upload.slices({n * sizeof(float)})[0], x.data.data(), n * sizeof(float),
           stream);
    FP8LAB_CUDA_CHECK(cudaMemsetAsync(device_[kStats], 0, sizes_[kStats], stream));
  }

  const float* x() const { return x_; }
  std::uint8_t* codes() const { return reinterpret_cast<std::uint8_t*>(device_[kCodes]); }
  float* scale_inv() const { return reinterpret_cast<float*>(device_[kScaleInv]); }
  float* scale() const { return reinterpret_cast<float*>(device_[kScale]); }
  gpu::DeviceQuantizeStats* stats() const {
    return reinterpret_cast<gpu::DeviceQuantizeStats*>(device_[kStats]);
  }
  gpu::scaling::BlockedOutputs outputs() const {
    return {codes(), scale_inv(), scale(), reinterpret_cast<std::uint8_t*>(device_[kE8m0]),
            stats()};
  }

  // Queues the downloads, synchronizes the stream once, and returns the host result in sim's
  // layout; `with_e8m0` for MX (sim fills scale_e8m0 only there).
  sc::QuantizeResult finish(sim::Format format, bool with_e8m0) const {
    for (std::size_t i = 0; i < kOutputs; ++i) {
      if (i != kE8m0 || with_e8m0) queue_download(pinned_[i], device_[i], sizes_[i], stream_);
    }
    FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    sc::QuantizeResult r;
    sim::QuantizedTensor& t = r.tensor;
    t.rows = rows_;
    t.cols = cols_;
    t.format = format;
    t.block_rows = block_rows_;
    t.block_cols = block_cols_;
    t.data = from_pinned<std::uint8_t>(pinned_[kCodes], sizes_[kCodes]);
    t.scale_inv = from_pinned<float>(pinned_[kScaleInv], sizes_[kScaleInv] / sizeof(float));
    t.scale = from_pinned<float>(pinned_[kScale], sizes_[kScale] / sizeof(float));
    if (with_e8m0) t.scale_e8m0 = from_pinned<std::uint8_t>(pinned_[kE8m0], sizes_[kE8m0]);
    gpu::DeviceQuantizeStats stats;
    std::memcpy(&stats, pinned_[kStats], sizeof stats);
    r.stats = host_stats(stats);
    return r;
  }

 private:
  // The outputs, in slice order.
  static constexpr std::size_t kCodes = 0, kScaleInv = 1, kScale = 2, kE8m0 = 3, kStats = 4,
                               kOutputs = 5;
  cudaStream_t stream_;
  std::int64_t rows_, cols_, block_rows_, block_cols_;
  std::array<std::size_t, kOutputs> sizes_{};
  const float* x_ = nullptr;
  std::array<std::byte*, kOutputs> device_{};
  std::array<std::byte*, kOutputs> pinned_{};
};

// A quantize's outputs kept on the device (LinearBackend::quantize_resident) in memory from
// LibTorch's caching allocator, on the stream they were made on: no cudaMalloc, and no cudaFree
// (which synchronizes the device) when the operand dies.
class CudaResidentOperand final : public ResidentOperand {
 public:
  CudaResidentOperand(std::int64_t rows, std::int64_t cols, sim::Format format,
                      std::int64_t block_rows, std::int64_t block_cols, bool with_e8m0,
                      cudaStream_t stream)
      : stream_(stream), with_e8m0_(with_e8m0) {
    shape_.rows = rows;
    shape_.cols = cols;
    shape_.format = format;
    shape_.block_rows = block_rows;
    shape_.block_cols = block_cols;
    const auto bytes = at::TensorOptions().device(at::kCUDA).dtype(at::kByte);
    const auto floats = bytes.dtype(at::kFloat);
    codes_ = at::empty({rows * cols}, bytes);
    scale_inv_ = at::empty({blocks()}, floats);
    scale_ = at::empty({blocks()}, floats);
    e8m0_ = at::empty({blocks()}, bytes);
    stats_ = at::empty({static_cast<std::int64_t>(sizeof(gpu::DeviceQuantizeStats))}, bytes);
    FP8LAB_CUDA_CHECK(
        cudaMemsetAsync(stats_.data_ptr(), 0, sizeof(gpu::DeviceQuantizeStats), stream_));
  }

  // Shape, format and blocks (the vectors stay empty).
  const sim::QuantizedTensor& shape() const { return shape_; }
  gpu::scaling::BlockedOutputs outputs() const {
    return {codes_.data_ptr<std::uint8_t>(), scale_inv_.data_ptr<float>(), scale_.data_ptr<float>(),
            e8m0_.data_ptr<std::uint8_t>(),
            static_cast<gpu::DeviceQuantizeStats*>(stats_.data_ptr())};
  }
  gpu::DeviceGemmOperand gemm_operand(bool k_is_cols) const {
    return {codes_.data_ptr<std::uint8_t>(),
            scale_inv_.data_ptr<float>(),
            shape_.rows,
            shape_.cols,
            shape_.block_rows,
            shape_.block_cols,
            shape_.format,
            k_is_cols};
  }

  sc::QuantizeResult to_host() const override {
    sc::QuantizeResult r;
    r.tensor = shape_;
    sim::QuantizedTensor& t = r.tensor;
    t.data.resize(static_cast<std::size_t>(shape_.rows * shape_.cols));
    t.scale_inv.resize(static_cast<std::size_t>(blocks()));
    t.scale.resize(static_cast<std::size_t>(blocks()));
    if (with_e8m0_) t.scale_e8m0.resize(static_cast<std::size_t>(blocks()));
    gpu::DeviceQuantizeStats stats{};
    queue_download(t.data.data(), codes_.data_ptr(), t.data.size(), stream_);
    queue_download(t.scale_inv.data(), scale_inv_.data_ptr(), t.scale_inv.size() * sizeof(float),
                   stream_);
    queue_download(t.scale.data(), scale_.data_ptr(), t.scale.size() * sizeof(float), stream_);
    queue_download(t.scale_e8m0.data(), e8m0_.data_ptr(), t.scale_e8m0.size(), stream_);
    queue_download(&stats, stats_.data_ptr(), sizeof stats, stream_);
    FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    r.stats = host_stats(stats);
    return r;
  }

 private:
  std::int64_t blocks() const { return shape_.scale_rows() * shape_.scale_cols(); }

  cudaStream_t stream_;
  bool with_e8m0_;  // MX: sim fills scale_e8m0 only there
  sim::QuantizedTensor shape_;
  at::Tensor codes_, scale_inv_, scale_, e8m0_, stats_;
};

const CudaResidentOperand& cuda_operand(const ResidentOperand& operand, const char* which) {
  const auto* o = dynamic_cast<const CudaResidentOperand*>(&operand);
  if (o == nullptr) {
    throw std::invalid_argument(std::string("CudaBackend: resident operand ") + which +
                                " was not made by CudaBackend::quantize_resident");
  }
  return *o;
}

// Refuses a matrix in the other memory space than a call takes, naming the call and the matrix.
void check_memory(const char* call, const char* matrix, MemorySpace got, MemorySpace want) {
  if (got == want) return;
  const auto text = [](MemorySpace m) { return m == MemorySpace::host ? "host" : "cuda"; };
  throw std::invalid_argument(std::string("CudaBackend::") + call + ": " + matrix + " is in " +
                              text(got) + " memory; this call takes " + text(want) + " memory");
}

// What gemm and gemm_resident check and choose before they look at an operand: the output
// matrix, its memory, a kernel for the accumulation model.
gpu::DeviceGemmOptions gemm_options(const char* call, recipes::Accumulation accumulation,
                                    MutableMatrix out, MemorySpace memory) {
  check_matrix("CudaBackend", "output", out.data.size(), out.rows, out.cols);
  check_memory(call, "out", out.memory, memory);
  gpu::require_kernel(accumulation);
  gpu::DeviceGemmOptions options;
  options.model = accumulation;
  return options;
}

// Delayed scaling: the slot's device scale, amax fmax-accumulated into history row 0 by the
// kernel (TE's atomicMaxFloat, te-accelerate.md §2.4); sim::scaling::quantize_per_tensor's layout
// (one block; `out` has room for one scale_inv and scale).
void quantize_delayed(const DevicePass& pass, std::int64_t slot, const float* x, std::int64_t n,
                      sim::Format format, const gpu::scaling::BlockedOutputs& out,
                      cudaStream_t stream) {
  gpu::QuantizeOutputs q;
  q.codes = out.codes;
  q.amax = pass.history.get() + slot;  // H[0][slot]
  q.stats = out.stats;
  q.scale_inv = out.scale_inv;
  gpu::quantize(x, n, pass.scale.get() + slot, format, sim::Overflow::kSatFinite, q, stream);
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(out.scale, pass.scale.get() + slot, sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream));
}

// How one quantize of a state runs: its plan, and for kDelayed the pass and slot of the tensor.
struct QuantizeRoute {
  const DevicePass* pass = nullptr;  // delayed scaling
  std::int64_t slot = 0;
  sc::QuantizePlan plan;
  sc::BlockShape blocks;  // plan.blocks(rows, cols)
};

// Queued on the current stream, not waited for: the next quantize reads the scales in stream
// order, and delayed_snapshot synchronizes before it reads the state.
void update_pass(DevicePass& pass, const sc::DelayedScalingConfig& config, sim::Format format) {
  // The update rule of sim's DelayedScalingState::update (sim/scaling/plan.hpp).
  gpu::scaling::DelayedUpdateGroup g;
  g.history = pass.history.get();
  g.scale = pass.scale.get();
  g.slots = pass.slots;
  g.len = pass.len;
  g.scaled_max = sc::delayed_scaled_max(config, format);
  g.most_recent = config.amax_compute_algo == sc::AmaxComputeAlgo::kMostRecent;
  g.recompute_scale = config.recomputes_scale(pass.updates);
  gpu::scaling::delayed_update({g}, current_stream());
  ++pass.updates;
}

// The lowering's plan of `tensor` for `role`, with the delayed pass and slot where it is stateful.
QuantizeRoute route_of(const CudaLinearState& s, const sc::QuantizePlan& plan, Operand tensor,
                       Gemm role, std::int64_t rows, std::int64_t cols) {
  QuantizeRoute route;
  route.plan = plan;
  route.blocks = route.plan.blocks(rows, cols);
  if (route.plan.kind == sc::QuantizeKind::kDelayed) {
    route.pass = tensor == Operand::kGradOutput ? &*s.backward : &*s.forward;
    route.slot = tensor == Operand::kWeight ? 1 : 0;  // forward slots: input 0, weight 1
  } else if (route.plan.kind == sc::QuantizeKind::kHighPrecision) {
    throw std::invalid_argument("CudaBackend: " + std::string(recipes::name(s.recipe.scaling)) +
                                " runs the " + std::string(experiments::name(role)) +
                                " GEMM in high precision; its operands are not quantized");
  }
  return route;
}

// The route of x through `call` ("quantize": x in host memory, "quantize_resident": in cuda
// memory), after the argument checks both share: sim's own, so both backends refuse the same input
// (rows, cols >= 1; E4M3 / E5M2).
QuantizeRoute checked_route(const char* call, const LinearScalingState& state, Operand tensor,
                            Gemm role, const ConstMatrix& x, MemorySpace memory) {
  check_matrix("CudaBackend", "operand", x.data.size(), x.rows, x.cols);
  check_memory(call, "x", x.memory, memory);
  const CudaLinearState& s = cuda_state(state);
  const sc::QuantizePlan plan = recipes::plan(s.recipe, tensor, role);
  sc::check_tensor_arguments((std::string("CudaBackend::") + call).c_str(), x.data.size(), x.rows,
                             x.cols, plan.format);
  return route_of(s, plan, tensor, role, x.rows, x.cols);
}

bool with_e8m0(const QuantizeRoute& route) { return route.plan.stores_e8m0(); }

void run_route(const QuantizeRoute& route, const float* x, std::int64_t rows, std::int64_t cols,
               const gpu::scaling::BlockedOutputs& out, cudaStream_t stream) {
  if (route.pass != nullptr) {
    quantize_delayed(*route.pass, route.slot, x, rows * cols, route.plan.format, out, stream);
  } else {
    gpu::scaling::quantize(route.plan, x, rows, cols, out, stream);
  }
}

// A GEMM operand's stored sizes must be what its shape says, or the kernel would read past them.
void check_operand(const char* which, const sim::QuantizedTensor& t) {
  const bool blocks_ok = t.block_rows >= 1 && t.block_cols >= 1;
  if (t.rows < 1 || t.cols < 1 || !blocks_ok ||
      t.data.size() != static_cast<std::size_t>(t.rows * t.cols) ||
      t.scale_inv.size() != static_cast<std::size_t>(t.scale_rows() * t.scale_cols())) {
    throw std::invalid_argument(
        std::string("CudaBackend::gemm: operand ") + which + " [" + std::to_string(t.rows) + ", " +
        std::to_string(t.cols) + "] in blocks " + std::to_string(t.block_rows) + " x " +
        std::to_string(t.block_cols) + " holds " + std::to_string(t.data.size()) + " codes and " +
        std::to_string(t.scale_inv.size()) + " scale_inv values" +
        (blocks_ok ? "; its shape needs " + std::to_string(t.rows * t.cols) + " and " +
                         std::to_string(t.scale_rows() * t.scale_cols())
                   : std::string("; blocks must be >= 1 x 1")));
  }
}

// Whether K is the stored columns of a GEMM's operands a and b (sim/settings.hpp's table).
std::pair<bool, bool> k_is_cols(Gemm role) {
  const sc::GemmOperands o = sc::gemm_operands(role);
  return {sc::k_is_cols(role, o.a), sc::k_is_cols(role, o.b)};
}

}  // namespace

CudaBackend::CudaBackend() {
  const gpu::DeviceInfo device = gpu::query_device();
  if (!device.available) {
    throw std::runtime_error("CudaBackend: " + device.reason + "; use --backend sim");
  }
  staging_ = std::make_unique<CudaStaging>();
}

CudaBackend::~CudaBackend() = default;

std::unique_ptr<LinearScalingState> CudaBackend::make_state(const recipes::Recipe& recipe) const {
  // docs/fp4.md ("Not yet: training FP4/FP6 on the cuda backend"): gpu/ has the quantizer
  // kernels, but no plan path (scale-byte and global slots, statistics) nor GEMM for them.
  // With per_role (a Linear's rules, for_layer), every role's scaling.
  recipes::Scaling subbyte = recipe.scaling;
  bool any_subbyte = recipes::subbyte_element_format(recipe.scaling).has_value();
  for (const recipes::Role role : recipes::kRoles) {
    if (recipe.per_role.empty() || any_subbyte) break;
    const recipes::Recipe r = recipes::role_recipe(recipe, role);
    if (recipes::subbyte_element_format(r.scaling)) {
      subbyte = r.scaling;
      any_subbyte = true;
    }
  }
  if (any_subbyte) {
    throw std::invalid_argument(
        "CudaBackend: scaling " + std::string(recipes::name(subbyte)) +
        " trains on the sim backend only (gpu/ has FP4/FP6 quantizer kernels but no plan path "
        "or GEMM for them yet); use --backend sim");
  }
  // mx_2d and backward_override dequantized need nothing here: the lowering's 32 x 32 weight
  // plans run gpu::scaling::quantize_mx with 32 x 32 blocks (gpu::gemm takes any block shape
  // whose K-blocks line up), and the dequantized backward reads the fprop codes through
  // dequantize_resident (or sim::scaling::dequantize for host tensors).
  return std::make_unique<CudaLinearState>(recipe);
}

sc::QuantizeResult CudaBackend::quantize(LinearScalingState& state, Operand tensor, Gemm role,
                                         ConstMatrix x) const {
  const QuantizeRoute route = checked_route("quantize", state, tensor, role, x, MemorySpace::host);
  const cudaStream_t stream = current_stream();
  const std::lock_guard lock(staging_->mutex);
  const QuantizeCall call(*staging_, x, route.blocks.rows, route.blocks.cols, stream);
  run_route(route, call.x(), x.rows, x.cols, call.outputs(), stream);
  return call.finish(route.plan.format, with_e8m0(route));
}

std::shared_ptr<const ResidentOperand> CudaBackend::quantize_resident(LinearScalingState& state,
                                                                      Operand tensor, Gemm role,
                                                                      ConstMatrix x) const {
  const QuantizeRoute route =
      checked_route("quantize_resident", state, tensor, role, x, MemorySpace::cuda);
  const cudaStream_t stream = current_stream();
  auto operand = std::make_shared<const CudaResidentOperand>(x.rows, x.cols, route.plan.format,
                                                             route.blocks.rows, route.blocks.cols,
                                                             with_e8m0(route), stream);
  run_route(route, x.data.data(), x.rows, x.cols, operand->outputs(), stream);
  return operand;
}

void CudaBackend::gemm(Gemm role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
                       recipes::Accumulation accumulation, MutableMatrix out) const {
  const gpu::DeviceGemmOptions options = gemm_options("gemm", accumulation, out, MemorySpace::host);
  const auto [a_k, b_k] = k_is_cols(role);
  check_operand("a", a);
  check_operand("b", b);
  check_output_shape(out, a.rows, a.cols, a_k, b.rows, b.cols, b_k);
  const std::span<const std::uint8_t> a_codes(a.data), b_codes(b.data);
  const std::span<const float> a_scales(a.scale_inv), b_scales(b.scale_inv);
  const std::size_t out_bytes = out.data.size() * sizeof(float);
  const cudaStream_t stream = current_stream();
  const std::lock_guard lock(staging_->mutex);
  CudaStaging& st = *staging_;
  const auto d = st.device.slices(
      {bytes_of(a_codes), bytes_of(a_scales), bytes_of(b_codes), bytes_of(b_scales), out_bytes});
  const auto up = st.upload.slices(
      {bytes_of(a_codes), bytes_of(a_scales), bytes_of(b_codes), bytes_of(b_scales)});
  upload(d[0], up[0], a_codes.data(), bytes_of(a_codes), stream);
  upload(d[1], up[1], a_scales.data(), bytes_of(a_scales), stream);
  upload(d[2], up[2], b_codes.data(), bytes_of(b_codes), stream);
  upload(d[3], up[3], b_scales.data(), bytes_of(b_scales), stream);
  const auto* da_codes = reinterpret_cast<const std::uint8_t*>(d[0]);
  const auto* da_scales = reinterpret_cast<const float*>(d[1]);
  const auto* db_codes = reinterpret_cast<const std::uint8_t*>(d[2]);
  const auto* db_scales = reinterpret_cast<const float*>(d[3]);
  const gpu::DeviceGemmOperand da{da_codes,     da_scales,    a.rows,   a.cols,
                                  a.block_rows, a.block_cols, a.format, a_k};
  const gpu::DeviceGemmOperand db{db_codes,     db_scales,    b.rows,   b.cols,
                                  b.block_rows, b.block_cols, b.format, b_k};
  gpu::gemm(da, db, options, reinterpret_cast<float*>(d[4]), stream);
  const auto down = st.download.slices({out_bytes});
  queue_download(down[0], d[4], out_bytes, stream);
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (out_bytes > 0) std::memcpy(out.data.data(), down[0], out_bytes);
}

void CudaBackend::gemm_resident(Gemm role, const ResidentOperand& a, const ResidentOperand& b,
                                recipes::Accumulation accumulation, MutableMatrix out) const {
  const gpu::DeviceGemmOptions options =
      gemm_options("gemm_resident", accumulation, out, MemorySpace::cuda);
  const auto [a_k, b_k] = k_is_cols(role);
  const CudaResidentOperand& ra = cuda_operand(a, "a");
  const CudaResidentOperand& rb = cuda_operand(b, "b");
  check_output_shape(out, ra.shape().rows, ra.shape().cols, a_k, rb.shape().rows, rb.shape().cols,
                     b_k);
  gpu::gemm(ra.gemm_operand(a_k), rb.gemm_operand(b_k), options, out.data.data(), current_stream());
}

void CudaBackend::high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b,
                                      HighPrecision precision, MutableMatrix out) const {
  check_matrix("CudaBackend", "operand a", a.data.size(), a.rows, a.cols);
  check_matrix("CudaBackend", "operand b", b.data.size(), b.rows, b.cols);
  check_matrix("CudaBackend", "output", out.data.size(), out.rows, out.cols);
  // All three in one memory: cuda runs in place, host goes through the staging memory.
  check_memory("high_precision_gemm", "operand b", b.memory, a.memory);
  check_memory("high_precision_gemm", "out", out.memory, a.memory);
  const auto [a_k, b_k] = k_is_cols(role);
  check_output_shape(out, a.rows, a.cols, a_k, b.rows, b.cols, b_k);
  gpu::DenseGemmOptions options;
  options.round_operands_to_bf16 = precision == HighPrecision::bf16;
  const cudaStream_t stream = current_stream();
  if (a.memory == MemorySpace::cuda) {
    gpu::high_precision_gemm({a.data.data(), a.rows, a.cols, a_k},
                             {b.data.data(), b.rows, b.cols, b_k}, options, out.data.data(),
                             stream);
    return;
  }
  const std::size_t out_bytes = out.data.size() * sizeof(float);
  const std::lock_guard lock(staging_->mutex);
  CudaStaging& st = *staging_;
  const auto d = st.device.slices({bytes_of(a.data), bytes_of(b.data), out_bytes});
  const auto up = st.upload.slices({bytes_of(a.data), bytes_of(b.data)});
  upload(d[0], up[0], a.data.data(), bytes_of(a.data), stream);
  upload(d[1], up[1], b.data.data(), bytes_of(b.data), stream);
  gpu::high_precision_gemm({reinterpret_cast<const float*>(d[0]), a.rows, a.cols, a_k},
                           {reinterpret_cast<const float*>(d[1]), b.rows, b.cols, b_k}, options,
                           reinterpret_cast<float*>(d[2]), stream);
  const auto down = st.download.slices({out_bytes});
  queue_download(down[0], d[2], out_bytes, stream);
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (out_bytes > 0) std::memcpy(out.data.data(), down[0], out_bytes);
}

std::vector<float> CudaBackend::to_host(ConstMatrix x) const {
  check_matrix("CudaBackend", "matrix", x.data.size(), x.rows, x.cols);
  check_memory("to_host", "x", x.memory, MemorySpace::cuda);
  std::vector<float> host(x.data.size());
  const cudaStream_t stream = current_stream();
  queue_download(host.data(), x.data.data(), host.size() * sizeof(float), stream);
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

void CudaBackend::dequantize_resident(const ResidentOperand& operand, MutableMatrix out) const {
  check_matrix("CudaBackend", "output", out.data.size(), out.rows, out.cols);
  check_memory("dequantize_resident", "out", out.memory, MemorySpace::cuda);
  const CudaResidentOperand& o = cuda_operand(operand, "operand");
  if (out.rows != o.shape().rows || out.cols != o.shape().cols) {
    throw std::invalid_argument("CudaBackend::dequantize_resident: output is " +
                                std::to_string(out.rows) + " x " + std::to_string(out.cols) +
                                "; the operand is " + std::to_string(o.shape().rows) + " x " +
                                std::to_string(o.shape().cols));
  }
  gpu::dequantize(o.gemm_operand(true), out.data.data(), current_stream());
}

void CudaBackend::end_forward(LinearScalingState& state) const {
  CudaLinearState& s = cuda_state(state);
  if (s.forward) update_pass(*s.forward, s.config, sc::forward_format(s.config.fp8_format));
}

void CudaBackend::end_backward(LinearScalingState& state) const {
  CudaLinearState& s = cuda_state(state);
  if (s.backward) {
    update_pass(*s.backward, s.config, sc::backward_format(s.config.fp8_format));
  }
}

DelayedStateSnapshot CudaBackend::delayed_snapshot(const LinearScalingState& state) {
  const CudaLinearState& s = cuda_state(state);
  DelayedStateSnapshot snap;
  if (!s.forward) return snap;
  // Whichever stream the updates were queued on (the caller may be on another thread).
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
