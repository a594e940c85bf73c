#include "experiments/linear/sim_backend.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "recipes/lowering.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/parallel.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/mx_dither.hpp"

namespace fp8lab::experiments {
namespace {

namespace sc = sim::scaling;

class SimLinearState final : public LinearScalingState {
 public:
  SimLinearState(const recipes::Recipe& r, std::uint64_t n, std::uint64_t seed)
      : recipe(r), ordinal(n), run_seed(seed) {
    if (const auto config = recipes::delayed_scaling(r)) delayed.emplace(*config);
  }
  recipes::Recipe recipe;
  std::optional<sc::DelayedScalingLinear> delayed;
  // The Linear's ordinal among the states this backend made (the model's Linears in conversion
  // order) and the run's seed (SimBackendOptions::run_seed): with the operand, its GEMM and the
  // call count below they key every random draw of this Linear.
  std::uint64_t ordinal = 0;
  std::uint64_t run_seed = 0;
  // Stochastic rounding (sim/scaling/nvfp4.hpp, mx_dither.hpp): the k-th stochastically rounded
  // quantization of operand `tensor` for GEMM `role` draws stochastic_stream(run_seed, ordinal,
  // tensor, role, k), k = stochastic_calls[role][tensor]++. Keyed by the run's seed as TE keys its
  // NVFP4 SR: NVIDIA/TransformerEngine at d0067d0da6cb01811b8072a7d304f0e00344ce2b,
  // transformer_engine/pytorch/csrc/quantizer.cpp, NVFP4Quantizer::quantize_impl with
  // stochastic_rounding, takes its Philox seed and offset from PyTorch's default CUDA generator
  // (init_philox_state(gen, 1024) in csrc/common.cpp: gen->philox_cuda_state, then philox_unpack),
  // which torch.manual_seed seeds and each call advances; so TE's SR bits change with the run's
  // seed. (Before this, the seed was the Linear's ordinal: seeds 0, 1, 2 of a sweep drew the same
  // streams.)
  std::uint64_t stochastic_calls[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};  // [role][tensor]
  // Tseng et al.'s RHT (mxfp4 with mx_rht, sim/scaling/mx_dither.hpp): the k-th quantization of
  // each backward operand (dgrad: weight, grad_output; wgrad: input, grad_output) takes draw k of
  // its GEMM, mx_rht_sign_mask(run_seed, kRhtStream + 2 * ordinal + GEMM, k), so a GEMM's two
  // operands share one draw per backward call (k is the step in a run: one backward per Linear
  // per step), every call draws afresh, and each seed draws its own signs (SimBackend::gemm
  // checks that the operands' draws agree).
  std::uint64_t rht_calls[2][2] = {{0, 0}, {0, 0}};  // [dgrad, wgrad][other operand, grad_output]
};

constexpr std::uint64_t kRhtStream = std::uint64_t{1} << 63;

SimLinearState& sim_state(LinearScalingState& state) {
  auto* s = dynamic_cast<SimLinearState*>(&state);
  if (s == nullptr)
    throw std::invalid_argument("SimBackend: the scaling state was made by another backend");
  return *s;
}

const SimLinearState& sim_state(const LinearScalingState& state) {
  return sim_state(const_cast<LinearScalingState&>(state));
}

sc::StochasticStream next_stochastic_stream(SimLinearState& s, Operand tensor, Gemm role) {
  std::uint64_t& k = s.stochastic_calls[static_cast<int>(role)][static_cast<int>(tensor)];
  return stochastic_stream(s.run_seed, s.ordinal, tensor, role, k++);
}

// Below this many elements a quantize runs on the calling thread: its work (a few hundred
// microseconds at most) is too short for a hand-off to the pool and the stitching of bands to pay.
// llama-xs's operands (512 x 128 .. 512 x 352) quantized at 2 threads took 2.6-3.5x the wall time
// of 1 thread (thread_scaling_bench quantize_2t_s / quantize_1t_s, load average 3.7-4.7).
// No bit depends on it: the quantizers give the same bits on every thread count.
constexpr std::size_t kMinElementsToSplitQuantize = std::size_t{1} << 18;

sim::ReduceDim k_dim(Gemm gemm, Operand operand) {
  return sc::k_is_cols(gemm, operand) ? sim::ReduceDim::kCols : sim::ReduceDim::kRows;
}

}  // namespace

sc::StochasticStream stochastic_stream(std::uint64_t run_seed, std::uint64_t ordinal,
                                       Operand tensor, Gemm role, std::uint64_t call) {
  if (ordinal >= (std::uint64_t{1} << 27) || call >= (std::uint64_t{1} << 32)) {
    throw std::length_error("SimBackend: stochastic rounding's Philox stream takes Linear ordinals "
                            "below 2^27 and calls below 2^32; got ordinal " +
                            std::to_string(ordinal) + ", call " + std::to_string(call));
  }
  const auto slot =
      static_cast<std::uint64_t>(3 * static_cast<int>(role) + static_cast<int>(tensor));
  return {run_seed, (ordinal << 36) | (slot << 32) | call};
}

void check_matrix(const char* backend, const char* what, std::size_t size, std::int64_t rows,
                  std::int64_t cols) {
  if (rows < 0 || cols < 0 || size != static_cast<std::size_t>(rows * cols)) {
    throw std::invalid_argument(
        std::string(backend) + ": " + what + " holds " + std::to_string(size) +
        " values, not rows * cols = " + std::to_string(rows) + " * " + std::to_string(cols));
  }
}

SimBackend::SimBackend(SimBackendOptions options) : options_(options) {
  if (options_.threads < 1) {
    throw std::invalid_argument("SimBackend: threads must be >= 1, got " +
                                std::to_string(options_.threads));
  }
}

std::unique_ptr<LinearScalingState> SimBackend::make_state(const recipes::Recipe& recipe) const {
  return std::make_unique<SimLinearState>(recipe, states_made_.fetch_add(1), options_.run_seed);
}

void SimBackend::copy_state(const LinearScalingState& from, LinearScalingState& to) const {
  const SimLinearState& source = sim_state(from);
  SimLinearState& target = sim_state(to);
  if (source.delayed.has_value() != target.delayed.has_value()) {
    throw std::invalid_argument("SimBackend::copy_state: one state is delayed scaling, the other "
                                "is not");
  }
  target.delayed = source.delayed;
}

sc::QuantizeResult SimBackend::quantize(LinearScalingState& state, Operand tensor, Gemm role,
                                        ConstMatrix x) const {
  check_matrix("SimBackend", "operand", x.data.size(), x.rows, x.cols);
  SimLinearState& s = sim_state(state);
  const sc::QuantizePlan plan = recipes::plan(s.recipe, tensor, role);
  const int threads = x.data.size() >= kMinElementsToSplitQuantize ? options_.threads : 1;
  if (plan.kind == sc::QuantizeKind::kDelayed) {
    switch (tensor) {
      case Operand::kInput: return s.delayed->quantize_input(x.data, x.rows, x.cols, threads);
      case Operand::kWeight: return s.delayed->quantize_weight(x.data, x.rows, x.cols, threads);
      case Operand::kGradOutput: break;
    }
    return s.delayed->quantize_grad_output(x.data, x.rows, x.cols, threads);
  }
  if (plan.kind == sc::QuantizeKind::kHighPrecision) {
    throw std::invalid_argument("SimBackend: " + std::string(recipes::name(s.recipe.scaling)) +
                                " runs the " + std::string(experiments::name(role)) +
                                " GEMM in high precision; its operands are not quantized");
  }
  if (plan.kind == sc::QuantizeKind::kMx && (plan.rht || plan.stochastic_rounding)) {
    std::uint64_t signs = 0;
    if (plan.rht) {
      const int g = role == Gemm::kDgrad ? 0 : 1;
      const int o = tensor == Operand::kGradOutput ? 1 : 0;
      signs = sc::mx_rht_sign_mask(s.run_seed,
                                   kRhtStream + 2 * s.ordinal + static_cast<std::uint64_t>(g),
                                   s.rht_calls[g][o]++);
    }
    if (!plan.stochastic_rounding) {
      return sc::quantize(plan, x.data, x.rows, x.cols, threads, nullptr, signs);
    }
    const sc::StochasticStream stream = next_stochastic_stream(s, tensor, role);
    return sc::quantize(plan, x.data, x.rows, x.cols, threads, &stream, signs);
  }
  if (plan.stochastic_rounding) {
    const sc::StochasticStream stream = next_stochastic_stream(s, tensor, role);
    return sc::quantize(plan, x.data, x.rows, x.cols, threads, &stream);
  }
  return sc::quantize(plan, x.data, x.rows, x.cols, threads);
}

bool SimBackend::quantizes_alike(const LinearScalingState& state, Operand tensor, Gemm first,
                                 Gemm second) const {
  const SimLinearState& s = sim_state(state);
  const sc::QuantizePlan a = recipes::plan(s.recipe, tensor, first);
  sc::QuantizePlan b = recipes::plan(s.recipe, tensor, second);
  const bool per_tensor = a.kind == sc::QuantizeKind::kCurrentTe ||
                          a.kind == sc::QuantizeKind::kTensorwiseTorchao ||
                          a.kind == sc::QuantizeKind::kStatic ||
                          a.kind == sc::QuantizeKind::kDelayed;
  // The axis (the GEMM's K) is the one field the roles' plans differ in, and a per-tensor
  // quantizer does not read it; the delayed state's slot and format follow the tensor alone.
  b.axis = a.axis;
  return per_tensor && a == b && !a.stochastic_rounding && !a.rht;
}

void SimBackend::gemm(Gemm role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
                      recipes::Accumulation accumulation, MutableMatrix out) const {
  check_matrix("SimBackend", "output", out.data.size(), out.rows, out.cols);
  if (a.rht_signs != b.rht_signs) {
    throw std::invalid_argument(
        "SimBackend: the " + std::string(experiments::name(role)) +
        " GEMM's operands were transformed with different Hadamard sign draws (mx_rht): their "
        "product is not the GEMM's; each operand must be quantized once per backward call");
  }
  const sc::GemmOperands operands = sc::gemm_operands(role);
  sim::GemmOptions options;
  options.accumulation = accumulation;
  options.threads = options_.threads;
  sim::gemm_into({a, k_dim(role, operands.a)}, {b, k_dim(role, operands.b)}, options, out.data);
}

void SimBackend::high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b,
                                     HighPrecision precision, MutableMatrix out) const {
  check_matrix("SimBackend", "operand a", a.data.size(), a.rows, a.cols);
  check_matrix("SimBackend", "operand b", b.data.size(), b.rows, b.cols);
  check_matrix("SimBackend", "output", out.data.size(), out.rows, out.cols);
  const sc::GemmOperands operands = sc::gemm_operands(role);
  const sim::ReduceDim a_k = k_dim(role, operands.a), b_k = k_dim(role, operands.b);
  sim::HighPrecisionGemmOptions options;
  options.round_operands_to_bf16 = precision == HighPrecision::bf16;
  options.threads = options_.threads;
  sim::high_precision_gemm_into({a.data, a.rows, a.cols, a_k}, {b.data, b.rows, b.cols, b_k},
                                options, out.data);
}

void SimBackend::run_independent(std::span<const Call> calls) const {
  const auto count = static_cast<std::int64_t>(calls.size());
  if (count < 2 || options_.threads < count) {
    LinearBackend::run_independent(calls);
    return;
  }
  // One hand-off for the pass instead of one per GEMM: each call on its own thread of sim's pool,
  // the calls' GEMMs on that thread alone (a one-thread call never enters the pool, so nothing
  // nests). The llama-xs GEMMs (K and N of 128-352) split poorly within one call.
  SimBackendOptions one_thread_options = options_;  // every option as this backend's but threads
  one_thread_options.threads = 1;
  const SimBackend one_thread(one_thread_options);
  sim::parallel_units(count, static_cast<int>(count),
                      [&](std::int64_t c) { calls[static_cast<std::size_t>(c)](one_thread); });
}

void SimBackend::end_forward(LinearScalingState& state) const {
  SimLinearState& s = sim_state(state);
  if (s.delayed) s.delayed->end_of_forward();
}

void SimBackend::end_backward(LinearScalingState& state) const {
  SimLinearState& s = sim_state(state);
  if (s.delayed) s.delayed->end_of_backward();
}

const sc::DelayedScalingLinear* SimBackend::delayed_state(const LinearScalingState& state) {
  const auto* s = dynamic_cast<const SimLinearState*>(&state);
  if (s == nullptr)
    throw std::invalid_argument("SimBackend: the scaling state was made by another backend");
  return s->delayed ? &*s->delayed : nullptr;
}

}  // namespace fp8lab::experiments
