#include "sim/scaling/delayed.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/scaling/current.hpp"

namespace fp8lab::sim::scaling {

void validate(const DelayedScalingConfig& config) {
  if (config.amax_history_len < 1) {
    throw std::invalid_argument("DelayedScalingConfig: amax_history_len = " +
                                std::to_string(config.amax_history_len) + "; accepted: >= 1");
  }
  if (config.interval < 1) {
    throw std::invalid_argument(
        "DelayedScalingConfig: interval = " + std::to_string(config.interval) + "; accepted: >= 1");
  }
}

void fused_amax_and_scale_update(std::span<float> history, std::int64_t len, std::span<float> scale,
                                 std::span<const float> reduced, AmaxComputeAlgo algo,
                                 float scaled_max, bool recompute_scale) {
  const auto n = static_cast<std::int64_t>(scale.size());
  if (len < 1 || static_cast<std::int64_t>(history.size()) != len * n) {
    throw std::invalid_argument(
        "fused_amax_and_scale_update: history.size() = " + std::to_string(history.size()) +
        ", expected len * n = " + std::to_string(len) + " * " + std::to_string(n));
  }
  if (!reduced.empty() && static_cast<std::int64_t>(reduced.size()) != n) {
    throw std::invalid_argument(
        "fused_amax_and_scale_update: reduced.size() = " + std::to_string(reduced.size()) +
        ", expected 0 or " + std::to_string(n));
  }
  auto h = [&](std::int64_t row, std::int64_t j) -> float& {
    return history[static_cast<std::size_t>(row * n + j)];
  };
  for (std::int64_t j = 0; j < n; ++j) {
    const auto js = static_cast<std::size_t>(j);
    const float last = (!reduced.empty() && reduced[js] != 0.0f) ? reduced[js] : h(0, j);
    float amax = 0.0f;
    if (last != 0.0f) {
      for (std::int64_t i = 0; i < len; ++i) {
        const float a = (i < len - 1) ? h(i + 1, j) : last;
        amax = std::fmax(amax, a);
        h(i, j) = (i > 0) ? a : 0.0f;
      }
    }
    if (algo == AmaxComputeAlgo::kMostRecent) amax = last;
    float& s = scale[js];
    if (recompute_scale && std::isfinite(amax) && amax > 0.0f) s = scaled_max / amax;
    if (std::isinf(s)) s = std::numeric_limits<float>::max();
  }
}

DelayedScalingState::DelayedScalingState(std::int64_t slots, Format format,
                                         const DelayedScalingConfig& config)
    : slots_(slots),
      len_(config.amax_history_len),
      format_(format),
      algo_(config.amax_compute_algo),
      scaled_max_(delayed_scaled_max(config, format)),
      config_(config) {
  validate(config);
  if (slots < 1) {
    throw std::invalid_argument("DelayedScalingState: slots = " + std::to_string(slots) +
                                "; accepted: >= 1");
  }
  if (!is_fp8(format)) {
    throw std::invalid_argument(std::string("DelayedScalingState: format = ") + spec(format).name +
                                "; accepted: e4m3, e5m2");
  }
  history_.assign(static_cast<std::size_t>(len_ * slots_), 0.0f);
  scale_.assign(static_cast<std::size_t>(slots_), 1.0f);
}

std::size_t DelayedScalingState::checked_slot(std::int64_t slot) const {
  if (slot < 0 || slot >= slots_) {
    throw std::invalid_argument("DelayedScalingState: slot = " + std::to_string(slot) +
                                "; accepted: 0.." + std::to_string(slots_ - 1));
  }
  return static_cast<std::size_t>(slot);
}

void DelayedScalingState::record_amax(std::int64_t slot, float amax) {
  float& row0 = history_[checked_slot(slot)];
  row0 = recorded_amax(row0, amax);
}

QuantizeResult DelayedScalingState::quantize(std::int64_t slot, std::span<const float> x,
                                             std::int64_t rows, std::int64_t cols, int threads) {
  const std::size_t j = checked_slot(slot);
  QuantizeResult result = quantize_per_tensor("DelayedScalingState::quantize", x, rows, cols,
                                              format_, scale_[j], threads);
  record_amax(slot, result.stats.amax);
  return result;
}

void DelayedScalingState::update(const AmaxReducer& reduce) {
  std::vector<float> reduced;
  if (reduce) {
    reduced.assign(history_.begin(), history_.begin() + slots_);
    reduce(reduced);
  }
  const bool recompute = config_.recomputes_scale(updates_);
  fused_amax_and_scale_update(history_, len_, scale_, reduced, algo_, scaled_max_, recompute);
  ++updates_;
}

float DelayedScalingState::scale(std::int64_t slot) const { return scale_[checked_slot(slot)]; }

float DelayedScalingState::history(std::int64_t row, std::int64_t slot) const {
  if (row < 0 || row >= len_) {
    throw std::invalid_argument("DelayedScalingState::history: row = " + std::to_string(row) +
                                "; accepted: 0.." + std::to_string(len_ - 1));
  }
  return history_[static_cast<std::size_t>(row * slots_) + checked_slot(slot)];
}

std::vector<float> DelayedScalingState::history_of(std::int64_t slot) const {
  std::vector<float> column;
  for (std::int64_t row = 0; row < len_; ++row) column.push_back(history(row, slot));
  return column;
}

DelayedScalingLinear::DelayedScalingLinear(const DelayedScalingConfig& config)
    : config_(config),
      forward_(2, forward_format(config.fp8_format), config),
      backward_(1, backward_format(config.fp8_format), config) {}

QuantizeResult DelayedScalingLinear::quantize_input(std::span<const float> x, std::int64_t rows,
                                                    std::int64_t cols, int threads) {
  return forward_.quantize(kInput, x, rows, cols, threads);
}

QuantizeResult DelayedScalingLinear::quantize_weight(std::span<const float> w, std::int64_t rows,
                                                     std::int64_t cols, int threads) {
  return forward_.quantize(kWeight, w, rows, cols, threads);
}

QuantizeResult DelayedScalingLinear::quantize_grad_output(std::span<const float> dy,
                                                          std::int64_t rows, std::int64_t cols,
                                                          int threads) {
  return backward_.quantize(kGradOutput, dy, rows, cols, threads);
}

}  // namespace fp8lab::sim::scaling
