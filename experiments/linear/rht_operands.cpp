#include "experiments/linear/rht_operands.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/rht.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kChunk = sim::kRhtSize;

// M[i][j] = sign_i (-1)^popcount(i & j) / 4 (sim/rht.hpp), exactly.
double rht_entry(int i, int j) {
  const bool negative =
      (((sim::kTeRhtSignMask >> i) & 1) ^ (std::popcount(static_cast<unsigned>(i & j)) & 1)) != 0;
  return negative ? -0.25 : 0.25;
}

// Adds chunk (c0, column o)'s crest factor of `v` to `sum` (when its rms is nonzero).
bool chunk_crest(const float* v, std::int64_t cols, std::int64_t c0, std::int64_t o, double& sum) {
  double amax = 0.0, squares = 0.0;
  for (std::int64_t i = 0; i < kChunk; ++i) {
    const double value = v[(c0 + i) * cols + o];
    amax = std::max(amax, std::fabs(value));
    squares += value * value;
  }
  if (squares == 0.0) return false;
  sum += amax / std::sqrt(squares / static_cast<double>(kChunk));
  return true;
}

}  // namespace

void RhtOperandSums::merge(const RhtOperandSums& other) {
  chunks += other.chunks;
  crest += other.crest;
  crest_rht += other.crest_rht;
  signal += other.signal;
  noise += other.noise;
  noise_rht += other.noise_rht;
}

double RhtOperandSums::mean_crest() const {
  return chunks == 0 ? kNaN : crest / static_cast<double>(chunks);
}
double RhtOperandSums::mean_crest_rht() const {
  return chunks == 0 ? kNaN : crest_rht / static_cast<double>(chunks);
}
double RhtOperandSums::rel_error() const {
  return signal == 0.0 ? kNaN : std::sqrt(noise / signal);
}
double RhtOperandSums::rel_error_rht() const {
  return signal == 0.0 ? kNaN : std::sqrt(noise_rht / signal);
}

RhtOperandSums measure_rht_operand(const sim::scaling::QuantizePlan& plan, ConstMatrix x) {
  if (plan.kind != sim::scaling::QuantizeKind::kNvfp4) {
    throw std::invalid_argument(std::string("measure_rht_operand: the plan is ") +
                                sim::scaling::to_string(plan.kind) + ", not nvfp4");
  }
  RhtOperandSums sums;
  const std::int64_t rows = x.rows, cols = x.cols;
  if (rows < kChunk || rows % kChunk != 0 || cols < 1) return sums;
  if (!std::all_of(x.data.begin(), x.data.end(), [](float v) { return std::isfinite(v); })) {
    return sums;
  }
  sim::scaling::QuantizePlan rn = plan;
  rn.rht = false;
  rn.stochastic_rounding = false;
  const auto plain =
      sim::scaling::dequantize(sim::scaling::quantize(rn, x.data, rows, cols).tensor);
  std::vector<float> transformed(x.data.size());
  sim::random_hadamard_transform_bf16(x.data, rows, cols, sim::RhtAxis::kRows, sim::kTeRhtSignMask,
                                      transformed);
  const auto rounded =
      sim::scaling::dequantize(sim::scaling::quantize(rn, transformed, rows, cols).tensor);
  double m[kChunk][kChunk];
  for (int i = 0; i < kChunk; ++i) {
    for (int j = 0; j < kChunk; ++j) m[i][j] = rht_entry(i, j);
  }
  for (std::int64_t c0 = 0; c0 < rows; c0 += kChunk) {
    for (std::int64_t o = 0; o < cols; ++o) {
      double crest = 0.0, crest_rht = 0.0;
      if (chunk_crest(x.data.data(), cols, c0, o, crest)) {
        chunk_crest(transformed.data(), cols, c0, o, crest_rht);
        sums.crest += crest;
        sums.crest_rht += crest_rht;
        ++sums.chunks;
      }
      for (int i = 0; i < kChunk; ++i) {
        const auto at = static_cast<std::size_t>((c0 + i) * cols + o);
        // x_i = sum_j y_j M[i][j]: the chunk's inverse transform of the rounded y.
        double back = 0.0;
        for (int j = 0; j < kChunk; ++j) {
          back += static_cast<double>(rounded[static_cast<std::size_t>((c0 + j) * cols + o)]) *
                  m[i][j];
        }
        const double value = x.data[at];
        sums.signal += value * value;
        sums.noise += (plain[at] - value) * (plain[at] - value);
        sums.noise_rht += (back - value) * (back - value);
      }
    }
  }
  return sums;
}

RhtOperandProbe::RhtOperandProbe(sim::scaling::QuantizePlan input,
                                 sim::scaling::QuantizePlan grad_output)
    : input_(input), grad_output_(grad_output) {
  for (const auto* plan : {&input_, &grad_output_}) {
    if (plan->kind != sim::scaling::QuantizeKind::kNvfp4) {
      throw std::invalid_argument(std::string("RhtOperandProbe: a plan is ") +
                                  sim::scaling::to_string(plan->kind) + ", not nvfp4");
    }
  }
}

void RhtOperandProbe::set_active(bool on) {
  const std::lock_guard lock(mutex_);
  active_ = on;
}

void RhtOperandProbe::observe(Operand tensor, ConstMatrix x) {
  if (tensor == Operand::kWeight) return;
  {
    const std::lock_guard lock(mutex_);
    if (!active_) return;
  }
  const auto sums = measure_rht_operand(tensor == Operand::kInput ? input_ : grad_output_, x);
  const std::lock_guard lock(mutex_);
  (tensor == Operand::kInput ? input_sums_ : grad_output_sums_).merge(sums);
}

RhtOperandSums RhtOperandProbe::take(Operand tensor) {
  const std::lock_guard lock(mutex_);
  auto& sums = tensor == Operand::kInput ? input_sums_ : grad_output_sums_;
  const RhtOperandSums out = sums;
  sums = RhtOperandSums{};
  return out;
}

}  // namespace fp8lab::experiments
