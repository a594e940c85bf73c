#include "experiments/fp8/sim_backend.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "sim/gemm/gemm.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/gemm_axes.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/rowwise.hpp"

namespace fp8lab::experiments {
namespace {

namespace sc = sim::scaling;

class SimLinearState final : public LinearScalingState {
 public:
  explicit SimLinearState(const recipes::Recipe& r) : recipe(r) {
    if (r.scaling == recipes::Scaling::delayed) delayed.emplace(delayed_config(r));
  }
  recipes::Recipe recipe;
  std::optional<sc::DelayedScalingLinear> delayed;
};

SimLinearState& sim_state(LinearScalingState& state) {
  auto* s = dynamic_cast<SimLinearState*>(&state);
  if (s == nullptr) throw std::invalid_argument("SimBackend: the scaling state was made by another backend");
  return *s;
}

sim::Accumulation to_sim(recipes::Accumulation accumulation) {
  switch (accumulation) {
    case recipes::Accumulation::fp32_seq: return sim::Accumulation::kFp32Seq;
    case recipes::Accumulation::hopper_split: return sim::Accumulation::kHopperSplitAccumulator;
    case recipes::Accumulation::hopper_fast: return sim::Accumulation::kHopperFastAccum;
    case recipes::Accumulation::exact: break;
  }
  return sim::Accumulation::kExact;
}

sc::E8M0Mode to_sim(recipes::MxScaleMode mode) {
  switch (mode) {
    case recipes::MxScaleMode::te: return sc::E8M0Mode::kTe;
    case recipes::MxScaleMode::floor: return sc::E8M0Mode::kFloor;
    case recipes::MxScaleMode::ceil: return sc::E8M0Mode::kCeil;
    case recipes::MxScaleMode::even: return sc::E8M0Mode::kEven;
    case recipes::MxScaleMode::rceil: break;
  }
  return sc::E8M0Mode::kRceil;
}

sc::TorchaoVersion to_sim(recipes::TorchaoVersion version) {
  return version == recipes::TorchaoVersion::v0_18 ? sc::TorchaoVersion::kV0_18
                                                    : sc::TorchaoVersion::kMain;
}

sc::Fp8Format to_sim(recipes::Fp8Format format) {
  switch (format) {
    case recipes::Fp8Format::HYBRID: return sc::Fp8Format::kHybrid;
    case recipes::Fp8Format::E4M3: return sc::Fp8Format::kE4M3;
    case recipes::Fp8Format::E5M2: break;
  }
  return sc::Fp8Format::kE5M2;
}

sc::TorchaoRecipe torchao_recipe(recipes::Scaling scaling) {
  switch (scaling) {
    case recipes::Scaling::tensorwise: return sc::TorchaoRecipe::kTensorwise;
    case recipes::Scaling::rowwise: return sc::TorchaoRecipe::kRowwise;
    default: break;
  }
  return sc::TorchaoRecipe::kRowwiseWithGwHp;
}

// Each GEMM's K as a stored dimension of its operands (the table of backend.hpp).
std::pair<sim::ReduceDim, sim::ReduceDim> k_dims(GemmRole role) {
  switch (role) {
    case GemmRole::fprop: return {sim::ReduceDim::kCols, sim::ReduceDim::kCols};
    case GemmRole::dgrad: return {sim::ReduceDim::kCols, sim::ReduceDim::kRows};
    case GemmRole::wgrad: break;
  }
  return {sim::ReduceDim::kRows, sim::ReduceDim::kRows};
}

}  // namespace

sc::Gemm scaling_gemm(GemmRole role) {
  switch (role) {
    case GemmRole::fprop: return sc::Gemm::kFprop;
    case GemmRole::dgrad: return sc::Gemm::kDgrad;
    case GemmRole::wgrad: break;
  }
  return sc::Gemm::kWgrad;
}

sc::Operand scaling_operand(LinearTensor tensor) {
  switch (tensor) {
    case LinearTensor::input: return sc::Operand::kInput;
    case LinearTensor::weight: return sc::Operand::kWeight;
    case LinearTensor::grad_output: break;
  }
  return sc::Operand::kGradOutput;
}

void check_matrix(const char* backend, const char* what, std::size_t size, std::int64_t rows,
                  std::int64_t cols) {
  if (rows < 0 || cols < 0 || size != static_cast<std::size_t>(rows * cols)) {
    throw std::invalid_argument(std::string(backend) + ": " + what + " holds " +
                                std::to_string(size) + " values, not rows * cols = " +
                                std::to_string(rows) + " * " + std::to_string(cols));
  }
}

sc::DelayedScalingConfig delayed_config(const recipes::Recipe& recipe) {
  sc::DelayedScalingConfig config;
  config.margin = static_cast<int>(recipe.margin);
  config.fp8_format = to_sim(recipe.fp8_format);
  config.amax_history_len = recipe.amax_history_len;
  config.amax_compute_algo = recipe.amax_compute_algo == recipes::AmaxComputeAlgo::max
                                 ? sc::AmaxComputeAlgo::kMax
                                 : sc::AmaxComputeAlgo::kMostRecent;
  config.interval = recipe.interval;
  sc::validate(config);
  return config;
}

sim::Format element_format(const recipes::Recipe& recipe, LinearTensor tensor) {
  const sc::Fp8Format format = to_sim(recipe.fp8_format);
  return tensor == LinearTensor::grad_output ? sc::backward_format(format)
                                             : sc::forward_format(format);
}

SimBackend::SimBackend(SimBackendOptions options) : options_(options) {
  if (options_.threads < 1) {
    throw std::invalid_argument("SimBackend: threads must be >= 1, got " +
                                std::to_string(options_.threads));
  }
}

std::unique_ptr<LinearScalingState> SimBackend::make_state(const recipes::Recipe& recipe) const {
  return std::make_unique<SimLinearState>(recipe);
}

sc::QuantizeResult SimBackend::quantize(LinearScalingState& state, LinearTensor tensor,
                                        GemmRole role, ConstMatrix x) const {
  check_matrix("SimBackend", "operand", x.data.size(), x.rows, x.cols);
  SimLinearState& s = sim_state(state);
  const recipes::Recipe& r = s.recipe;
  const sim::Format format = element_format(r, tensor);
  const sc::ScaleAxis axis = sc::scale_axis(scaling_gemm(role), scaling_operand(tensor));
  switch (r.scaling) {
    case recipes::Scaling::delayed:
      switch (tensor) {
        case LinearTensor::input: return s.delayed->quantize_input(x.data, x.rows, x.cols);
        case LinearTensor::weight: return s.delayed->quantize_weight(x.data, x.rows, x.cols);
        case LinearTensor::grad_output:
          return s.delayed->quantize_grad_output(x.data, x.rows, x.cols);
      }
      break;
    case recipes::Scaling::current:
      return sc::quantize_current_te(x.data, x.rows, x.cols, format, r.power_2_scales);
    case recipes::Scaling::tensorwise:
    case recipes::Scaling::rowwise:
    case recipes::Scaling::rowwise_with_gw_hp: {
      // Granularity from torchao's table; format and power-of-2 from the recipe (whose defaults
      // are that table's, recipes::default_fp8_format / default_power_2_scales).
      const sc::OperandCast cast =
          sc::torchao_operand_cast(torchao_recipe(r.scaling), scaling_gemm(role),
                                   scaling_operand(tensor));
      if (cast.scaling == sc::OperandScaling::kTensorwise) {
        return sc::quantize_tensorwise_torchao(x.data, x.rows, x.cols, format, r.power_2_scales);
      }
      if (cast.scaling == sc::OperandScaling::kAxiswise) {
        return sc::quantize_axiswise_torchao(x.data, x.rows, x.cols, axis, format,
                                             r.power_2_scales);
      }
      throw std::invalid_argument("SimBackend: " + std::string(recipes::name(r.scaling)) +
                                  " runs the " + std::string(experiments::name(role)) +
                                  " GEMM in high precision; its operands are not quantized");
    }
    case recipes::Scaling::block: {
      sc::BlockScalingConfig config;
      config.pow2 = r.power_2_scales;
      return sc::quantize_block_operand(x.data, x.rows, x.cols, scaling_gemm(role),
                                        scaling_operand(tensor), format, config);
    }
    case recipes::Scaling::mxfp8:
      return sc::quantize_mx_operand(x.data, x.rows, x.cols, scaling_gemm(role),
                                     scaling_operand(tensor), format, to_sim(r.mx_scale_mode),
                                     to_sim(r.torchao_version));
  }
  throw std::invalid_argument("SimBackend: unknown scaling " +
                              std::to_string(static_cast<int>(r.scaling)));
}

void SimBackend::gemm(GemmRole role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
                      recipes::Accumulation accumulation, MutableMatrix out) const {
  check_matrix("SimBackend", "output", out.data.size(), out.rows, out.cols);
  const auto [a_k, b_k] = k_dims(role);
  sim::GemmOptions options;
  options.accumulation = to_sim(accumulation);
  options.threads = options_.threads;
  sim::gemm_into({a, a_k}, {b, b_k}, options, out.data);
}

void SimBackend::high_precision_gemm(GemmRole role, ConstMatrix a, ConstMatrix b,
                                     HighPrecision precision, MutableMatrix out) const {
  check_matrix("SimBackend", "operand a", a.data.size(), a.rows, a.cols);
  check_matrix("SimBackend", "operand b", b.data.size(), b.rows, b.cols);
  check_matrix("SimBackend", "output", out.data.size(), out.rows, out.cols);
  const auto [a_k, b_k] = k_dims(role);
  sim::HighPrecisionGemmOptions options;
  options.round_operands_to_bf16 = precision == HighPrecision::bf16;
  options.threads = options_.threads;
  sim::high_precision_gemm_into({a.data, a.rows, a.cols, a_k}, {b.data, b.rows, b.cols, b_k},
                                options, out.data);
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
  if (s == nullptr) throw std::invalid_argument("SimBackend: the scaling state was made by another backend");
  return s->delayed ? &*s->delayed : nullptr;
}

}  // namespace fp8lab::experiments
