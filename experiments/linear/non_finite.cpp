#include "experiments/linear/non_finite.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace fp8lab::experiments {

std::optional<NonFiniteScan> scan_non_finite(std::span<const float> x) {
  std::optional<NonFiniteScan> scan;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isfinite(x[i])) continue;
    if (!scan) scan = NonFiniteScan{static_cast<std::int64_t>(i), 0, 0};
    (std::isnan(x[i]) ? scan->nan_count : scan->inf_count) += 1;
  }
  return scan;
}

bool NonFiniteWatch::found() const {
  const std::lock_guard lock(mutex_);
  return first_.has_value();
}

std::optional<NonFiniteSite> NonFiniteWatch::first() const {
  const std::lock_guard lock(mutex_);
  return first_;
}

void NonFiniteWatch::record(NonFiniteSite site) {
  const std::lock_guard lock(mutex_);
  if (!first_) first_ = std::move(site);
}

LayerWatch::LayerWatch(std::string layer, std::shared_ptr<NonFiniteWatch> run)
    : layer_(std::move(layer)), run_(std::move(run)) {}

namespace {
std::size_t slot(Operand tensor, Gemm gemm) {
  return static_cast<std::size_t>(tensor) * 3 + static_cast<std::size_t>(gemm);
}
}  // namespace

void LayerWatch::after_quantize(Operand tensor, Gemm gemm, ConstMatrix x,
                                const sim::scaling::QuantizeResult& result) {
  // The quantizer's own figures say whether to look: amax is +Inf when an element is ±Inf, and a
  // NaN element becomes a NaN code (QuantizeStats).
  if ((result.stats.nan > 0 || !std::isfinite(result.stats.amax)) && !run_->found()) {
    record_site(tensor, gemm, x, true);
  }
  ScaleHistoryEntry entry{run_->step(), result.stats.amax, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  for (const float s : result.tensor.scale) {
    entry.scale_min = std::fmin(entry.scale_min, s);
    entry.scale_max = std::fmax(entry.scale_max, s);
  }
  auto& ring = history_[slot(tensor, gemm)];
  ring.push_back(entry);
  if (ring.size() > kScaleHistoryLength) ring.pop_front();
}

void LayerWatch::check_operand(Operand tensor, Gemm gemm, ConstMatrix x) {
  if (!run_->found()) record_site(tensor, gemm, x, false);
}

bool LayerWatch::inject_now(bool backward) const {
  const auto& fault = run_->injection;
  return fault && fault->layer == layer_ && fault->step == run_->step() &&
         fault->backward == backward;
}

void LayerWatch::record_site(Operand tensor, Gemm gemm, ConstMatrix x, bool quantized) {
  // A NaN code can also come from an E4M3 overflow under a non-saturating cast: only a
  // non-finite input is a site.
  const auto scan = scan_non_finite(x.data);
  if (!scan) return;
  NonFiniteSite site;
  site.step = run_->step();
  site.backward = tensor == Operand::kGradOutput;
  site.layer = layer_;
  site.tensor = tensor;
  site.gemm = gemm;
  site.quantized = quantized;
  site.rows = x.rows;
  site.cols = x.cols;
  site.first_index = scan->first_index;
  site.nan_count = scan->nan_count;
  site.inf_count = scan->inf_count;
  const auto& ring = history_[slot(tensor, gemm)];
  site.history.assign(ring.begin(), ring.end());
  const auto size = static_cast<std::int64_t>(x.data.size());
  for (std::int64_t i = std::max<std::int64_t>(0, scan->first_index - kSurroundingValues);
       i <= std::min(size - 1, scan->first_index + kSurroundingValues); ++i) {
    const float v = x.data[static_cast<std::size_t>(i)];
    site.values.push_back({i, v, std::bit_cast<std::uint32_t>(v)});
  }
  run_->record(std::move(site));
}

}  // namespace fp8lab::experiments
