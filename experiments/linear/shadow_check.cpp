#include "experiments/linear/shadow_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>

#include "recipes/lowering.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/delayed.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments {
namespace {

namespace sc = sim::scaling;

class ShadowState final : public LinearScalingState {
 public:
  ShadowState(std::unique_ptr<LinearScalingState> w, std::unique_ptr<LinearScalingState> r,
              const recipes::Recipe& rec, std::string l)
      : watched(std::move(w)),
        reference(std::move(r)),
        recipe(rec),
        delayed(recipes::delayed_scaling(rec)),
        layer(std::move(l)) {}
  std::unique_ptr<LinearScalingState> watched;
  std::unique_ptr<LinearScalingState> reference;  // sim's state (stateless recipes only)
  recipes::Recipe recipe;
  std::optional<sc::DelayedScalingConfig> delayed;  // delayed recipes: settings and update rule
  std::string layer;
  std::int64_t step = 0;  // end_backward calls so far
};

ShadowState& shadow_state(LinearScalingState& state) {
  auto* s = dynamic_cast<ShadowState*>(&state);
  if (s == nullptr) {
    throw std::invalid_argument(
        "ShadowCheckedBackend: the scaling state was made by another backend");
  }
  return *s;
}

std::string float_text(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  char text[64];
  std::snprintf(text, sizeof text, "0x%08X (%.9g)", bits, static_cast<double>(v));
  return text;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Compares one call's values of the watched backend with sim's and counts into the report.
class Comparison {
 public:
  Comparison(ShadowReport& report, std::size_t keep_first, std::string_view watched,
             std::string layer, std::string tensor)
      : report_(report),
        keep_first_(keep_first),
        watched_(watched),
        layer_(std::move(layer)),
        tensor_(std::move(tensor)) {
    ++report_.operations;
  }

  void floats(const std::string& kind, std::span<const float> got, std::span<const float> want) {
    if (!same_size(kind, got.size(), want.size())) return;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ++report_.compared;
      if (!same_bits(got[i], want[i])) {
        mismatch(kind, kind + "[" + std::to_string(i) + "]: " + std::string(watched_) + " " +
                           float_text(got[i]) + ", sim " + float_text(want[i]));
      }
    }
  }
  void bytes(const std::string& kind, std::span<const std::uint8_t> got,
             std::span<const std::uint8_t> want) {
    if (!same_size(kind, got.size(), want.size())) return;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ++report_.compared;
      if (got[i] != want[i]) {
        char text[96];
        std::snprintf(text, sizeof text, "[%zu]: %.*s 0x%02X, sim 0x%02X", i,
                      static_cast<int>(watched_.size()), watched_.data(), got[i], want[i]);
        mismatch(kind, kind + text);
      }
    }
  }
  void integer(const std::string& kind, const std::string& what, std::int64_t got,
               std::int64_t want) {
    ++report_.compared;
    if (got != want) {
      mismatch(kind, what + ": " + std::string(watched_) + " " + std::to_string(got) + ", sim " +
                         std::to_string(want));
    }
  }

  void quantized(const sc::QuantizeResult& got, const sc::QuantizeResult& want) {
    const sim::QuantizedTensor& g = got.tensor;
    const sim::QuantizedTensor& w = want.tensor;
    integer("shape", "rows", g.rows, w.rows);
    integer("shape", "cols", g.cols, w.cols);
    integer("shape", "format", static_cast<int>(g.format), static_cast<int>(w.format));
    integer("shape", "block_rows", g.block_rows, w.block_rows);
    integer("shape", "block_cols", g.block_cols, w.block_cols);
    bytes("code", g.data, w.data);
    floats("scale_inv", g.scale_inv, w.scale_inv);
    floats("scale", g.scale, w.scale);
    bytes("e8m0", g.scale_e8m0, w.scale_e8m0);
    floats("stats", std::span(&got.stats.amax, 1), std::span(&want.stats.amax, 1));
    integer("stats", "stats.count", static_cast<std::int64_t>(got.stats.count),
            static_cast<std::int64_t>(want.stats.count));
    integer("stats", "stats.saturated", static_cast<std::int64_t>(got.stats.saturated),
            static_cast<std::int64_t>(want.stats.saturated));
    integer("stats", "stats.underflowed", static_cast<std::int64_t>(got.stats.underflowed),
            static_cast<std::int64_t>(want.stats.underflowed));
    integer("stats", "stats.nan", static_cast<std::int64_t>(got.stats.nan),
            static_cast<std::int64_t>(want.stats.nan));
  }

  void state(const DelayedStateSnapshot& got, const DelayedStateSnapshot& want) {
    integer("shape", "history_len", got.history_len, want.history_len);
    floats("history", got.forward_history, want.forward_history);
    floats("scale", got.forward_scale, want.forward_scale);
    floats("history", got.backward_history, want.backward_history);
    floats("scale", got.backward_scale, want.backward_scale);
    integer("history", "forward_updates", got.forward_updates, want.forward_updates);
    integer("history", "backward_updates", got.backward_updates, want.backward_updates);
  }

 private:
  bool same_size(const std::string& kind, std::size_t got, std::size_t want) {
    ++report_.compared;
    if (got == want) return true;
    mismatch("shape", kind + " holds " + std::to_string(got) + " values in " +
                          std::string(watched_) + ", " + std::to_string(want) + " in sim");
    return false;
  }
  void mismatch(const std::string& kind, const std::string& text) {
    ++report_.mismatches;
    ++report_.by_key[layer_ + "|" + tensor_ + "|" + kind];
    if (report_.first.size() < keep_first_) {
      report_.first.push_back(layer_ + " " + tensor_ + " " + text);
    }
  }

  ShadowReport& report_;
  std::size_t keep_first_;
  std::string_view watched_;
  std::string layer_;
  std::string tensor_;
};

// The slot of a tensor in its pass (sim::scaling::DelayedScalingLinear's slots).
std::int64_t delayed_slot(Operand tensor) { return tensor == Operand::kWeight ? 1 : 0; }

}  // namespace

DelayedStateSnapshot sim_delayed_snapshot(const LinearScalingState& state) {
  DelayedStateSnapshot snap;
  const sc::DelayedScalingLinear* d = SimBackend::delayed_state(state);
  if (d == nullptr) return snap;
  const auto pass = [](const sc::DelayedScalingState& p, std::vector<float>& history,
                       std::vector<float>& scale, std::int64_t& updates) {
    for (std::int64_t row = 0; row < p.history_len(); ++row) {
      for (std::int64_t slot = 0; slot < p.slots(); ++slot) history.push_back(p.history(row, slot));
    }
    for (std::int64_t slot = 0; slot < p.slots(); ++slot) scale.push_back(p.scale(slot));
    updates = p.update_count();
  };
  snap.history_len = d->forward().history_len();
  pass(d->forward(), snap.forward_history, snap.forward_scale, snap.forward_updates);
  pass(d->backward(), snap.backward_history, snap.backward_scale, snap.backward_updates);
  return snap;
}

nlohmann::json to_json(const ShadowReport& report) {
  nlohmann::json by_key = nlohmann::json::array();
  for (const auto& [key, count] : report.by_key) {
    const auto first_bar = key.find('|');
    const auto second_bar = key.find('|', first_bar + 1);
    by_key.push_back({{"layer", key.substr(0, first_bar)},
                      {"tensor", key.substr(first_bar + 1, second_bar - first_bar - 1)},
                      {"kind", key.substr(second_bar + 1)},
                      {"mismatches", count}});
  }
  return {{"every", report.every},       {"operations", report.operations},
          {"compared", report.compared}, {"mismatches", report.mismatches},
          {"by_key", std::move(by_key)}, {"first", report.first}};
}

ShadowCheckedBackend::ShadowCheckedBackend(std::shared_ptr<const LinearBackend> watched,
                                           DelayedSnapshotFn snapshot, ShadowOptions options)
    : watched_(std::move(watched)), snapshot_(std::move(snapshot)), options_(options) {
  if (!watched_ || !snapshot_) {
    throw std::invalid_argument("ShadowCheckedBackend: needs a backend and its snapshot function");
  }
  if (options_.every < 1) {
    throw std::invalid_argument("ShadowCheckedBackend: every = " + std::to_string(options_.every) +
                                "; accepted: >= 1 (the shadow check runs every N-th step)");
  }
  report_.every = options_.every;
}

std::unique_ptr<LinearScalingState> ShadowCheckedBackend::make_state(
    const recipes::Recipe& recipe) const {
  std::string layer;
  {
    const std::lock_guard lock(mutex_);
    layer = "linear#" + std::to_string(states_made_++);
  }
  return std::make_unique<ShadowState>(watched_->make_state(recipe), reference_.make_state(recipe),
                                       recipe, std::move(layer));
}

bool ShadowCheckedBackend::begin_quantize(LinearScalingState& state) const {
  ShadowState& s = shadow_state(state);
  const std::lock_guard lock(mutex_);
  gemm_layer_ = s.layer;
  return s.step % options_.every == 0;
}

DelayedStateSnapshot ShadowCheckedBackend::delayed_before(LinearScalingState& state) const {
  ShadowState& s = shadow_state(state);
  return s.delayed ? snapshot_(*s.watched) : DelayedStateSnapshot{};
}

void ShadowCheckedBackend::check_quantize(LinearScalingState& state, Operand tensor, Gemm role,
                                          ConstMatrix host_x, const sc::QuantizeResult& got,
                                          const DelayedStateSnapshot& before) const {
  ShadowState& s = shadow_state(state);
  const bool delayed = s.delayed.has_value();
  sc::QuantizeResult want;
  DelayedStateSnapshot expected_state = before;
  if (delayed) {
    // DelayedScalingState::quantize: the cast with the slot's current scale, then the fmax of the
    // tensor's amax into history row 0 (docs/numerics.md §2.1).
    const bool backward = tensor == Operand::kGradOutput;
    const std::vector<float>& scales = backward ? before.backward_scale : before.forward_scale;
    const std::size_t slot = static_cast<std::size_t>(delayed_slot(tensor));
    want = sc::quantize_per_tensor("shadow check", host_x.data, host_x.rows, host_x.cols,
                                   recipes::plan(s.recipe, tensor, role).format, scales.at(slot));
    float& row0 =
        (backward ? expected_state.backward_history : expected_state.forward_history).at(slot);
    row0 = std::fmax(row0, want.stats.amax);
  } else {
    want = reference_.quantize(*s.reference, tensor, role, host_x);
  }
  const DelayedStateSnapshot after = delayed ? snapshot_(*s.watched) : DelayedStateSnapshot{};
  const std::lock_guard lock(mutex_);
  Comparison c(report_, options_.keep_first, watched_->name(), s.layer,
               std::string(experiments::name(tensor)) + "/" + std::string(experiments::name(role)));
  c.quantized(got, want);
  if (delayed) c.state(after, expected_state);
}

sc::QuantizeResult ShadowCheckedBackend::quantize(LinearScalingState& state, Operand tensor,
                                                  Gemm role, ConstMatrix x) const {
  ShadowState& s = shadow_state(state);
  if (!begin_quantize(state)) return watched_->quantize(*s.watched, tensor, role, x);
  const DelayedStateSnapshot before = delayed_before(state);
  sc::QuantizeResult got = watched_->quantize(*s.watched, tensor, role, x);
  check_quantize(state, tensor, role, x, got, before);
  return got;
}

std::shared_ptr<const ResidentOperand> ShadowCheckedBackend::quantize_resident(
    LinearScalingState& state, Operand tensor, Gemm role, ConstMatrix x) const {
  ShadowState& s = shadow_state(state);
  if (!begin_quantize(state)) return watched_->quantize_resident(*s.watched, tensor, role, x);
  const DelayedStateSnapshot before = delayed_before(state);
  auto got = watched_->quantize_resident(*s.watched, tensor, role, x);
  // Only shadowed steps copy x and the operand to the host.
  const std::vector<float> host_x = watched_->to_host(x);
  check_quantize(state, tensor, role, {host_x, x.rows, x.cols}, got->to_host(), before);
  return got;
}

bool ShadowCheckedBackend::shadowed_gemm(std::string& layer) const {
  const std::lock_guard lock(mutex_);
  layer = gemm_layer_;
  return step_ % options_.every == 0;
}

void ShadowCheckedBackend::compare_output(const std::string& layer, Gemm role,
                                          std::span<const float> got,
                                          std::span<const float> want) const {
  const std::lock_guard lock(mutex_);
  Comparison c(report_, options_.keep_first, watched_->name(), layer,
               std::string(experiments::name(role)));
  c.floats("output", got, want);
}

void ShadowCheckedBackend::gemm(Gemm role, const sim::QuantizedTensor& a,
                                const sim::QuantizedTensor& b, recipes::Accumulation accumulation,
                                MutableMatrix out) const {
  watched_->gemm(role, a, b, accumulation, out);
  std::string layer;
  if (!shadowed_gemm(layer)) return;
  std::vector<float> want(out.data.size());
  reference_.gemm(role, a, b, accumulation, {want, out.rows, out.cols});
  compare_output(layer, role, out.data, want);
}

void ShadowCheckedBackend::gemm_resident(Gemm role, const ResidentOperand& a,
                                         const ResidentOperand& b,
                                         recipes::Accumulation accumulation,
                                         MutableMatrix out) const {
  watched_->gemm_resident(role, a, b, accumulation, out);
  std::string layer;
  if (!shadowed_gemm(layer)) return;
  const sc::QuantizeResult host_a = a.to_host(), host_b = b.to_host();
  const std::vector<float> got = watched_->to_host({out.data, out.rows, out.cols, out.memory});
  std::vector<float> want(out.data.size());
  reference_.gemm(role, host_a.tensor, host_b.tensor, accumulation, {want, out.rows, out.cols});
  compare_output(layer, role, got, want);
}

void ShadowCheckedBackend::dequantize_resident(const ResidentOperand& operand,
                                               MutableMatrix out) const {
  watched_->dequantize_resident(operand, out);
  std::string layer;
  if (!shadowed_gemm(layer)) return;
  std::vector<float> got = watched_->to_host({out.data, out.rows, out.cols, out.memory});
  std::vector<float> want = sc::dequantize(operand.to_host().tensor);
  // A NaN's bits are the host's in sim and 0x7FFFFFFF on the GPU (gpu/dequantize.hpp): compared
  // as NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float& v : got) v = std::isnan(v) ? nan : v;
  for (float& v : want) v = std::isnan(v) ? nan : v;
  const std::lock_guard lock(mutex_);
  Comparison c(report_, options_.keep_first, watched_->name(), layer, "dequantized");
  c.floats("dequantized", got, want);
}

void ShadowCheckedBackend::high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b,
                                               HighPrecision precision, MutableMatrix out) const {
  watched_->high_precision_gemm(role, a, b, precision, out);
  std::string layer;
  if (!shadowed_gemm(layer)) return;
  std::vector<float> want(out.data.size());
  if (a.memory == MemorySpace::cuda) {
    // The watched backend took all three in cuda memory; sim replays host copies.
    const std::vector<float> host_a = watched_->to_host(a), host_b = watched_->to_host(b);
    const std::vector<float> got = watched_->to_host({out.data, out.rows, out.cols, out.memory});
    reference_.high_precision_gemm(role, {host_a, a.rows, a.cols}, {host_b, b.rows, b.cols},
                                   precision, {want, out.rows, out.cols});
    compare_output("high_precision", role, got, want);
    return;
  }
  reference_.high_precision_gemm(role, a, b, precision, {want, out.rows, out.cols});
  compare_output("high_precision", role, out.data, want);
}

void ShadowCheckedBackend::end_pass(LinearScalingState& state, bool forward) const {
  ShadowState& s = shadow_state(state);
  const bool shadowed = s.step % options_.every == 0 && s.delayed;
  const DelayedStateSnapshot before = shadowed ? snapshot_(*s.watched) : DelayedStateSnapshot{};
  if (forward) {
    watched_->end_forward(*s.watched);
  } else {
    watched_->end_backward(*s.watched);
  }
  if (shadowed) {
    // DelayedScalingState::update (single process: no reduction).
    const sc::DelayedScalingConfig& config = *s.delayed;
    const sim::Format format = forward ? sc::forward_format(config.fp8_format)
                                       : sc::backward_format(config.fp8_format);
    DelayedStateSnapshot want = before;
    std::vector<float>& history = forward ? want.forward_history : want.backward_history;
    std::vector<float>& scale = forward ? want.forward_scale : want.backward_scale;
    std::int64_t& updates = forward ? want.forward_updates : want.backward_updates;
    sc::fused_amax_and_scale_update(history, want.history_len, scale, {}, config.amax_compute_algo,
                                    sc::delayed_scaled_max(config, format),
                                    config.recomputes_scale(updates));
    ++updates;
    const DelayedStateSnapshot got = snapshot_(*s.watched);
    const std::lock_guard lock(mutex_);
    Comparison c(report_, options_.keep_first, watched_->name(), s.layer,
                 forward ? "forward" : "backward");
    c.state(got, want);
  }
  if (!forward) {
    ++s.step;
    const std::lock_guard lock(mutex_);
    step_ = std::max(step_, s.step);
  }
}

void ShadowCheckedBackend::end_forward(LinearScalingState& state) const { end_pass(state, true); }
void ShadowCheckedBackend::end_backward(LinearScalingState& state) const { end_pass(state, false); }

ShadowReport ShadowCheckedBackend::report() const {
  const std::lock_guard lock(mutex_);
  return report_;
}

}  // namespace fp8lab::experiments
