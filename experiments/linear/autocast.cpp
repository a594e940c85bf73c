#include "experiments/linear/autocast.hpp"

#include <c10/core/GradMode.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <exception>

namespace fp8lab::experiments {
namespace {
thread_local Fp8Autocast* innermost_region = nullptr;
}

bool Fp8AutocastRecord::add(std::shared_ptr<const LinearBackend> backend,
                            std::shared_ptr<LinearScalingState> state) {
  const bool first_call = !any_call_;
  any_call_ = true;
  const bool known = std::any_of(entries_.begin(), entries_.end(),
                                 [&](const Entry& e) { return e.state == state; });
  if (!known) entries_.push_back({std::move(backend), std::move(state)});
  return first_call;
}

void Fp8AutocastRecord::end_forward() const {
  for (const Entry& e : entries_) e.backend->end_forward(*e.state);
}

void Fp8AutocastRecord::end_backward() const {
  for (const Entry& e : entries_) e.backend->end_backward(*e.state);
}

Fp8Autocast::Fp8Autocast(bool enabled) : enabled_(enabled), outer_(innermost_region) {
  record_ = outer_ != nullptr ? outer_->record_ : std::make_shared<Fp8AutocastRecord>();
  innermost_region = this;
}

Fp8Autocast::~Fp8Autocast() noexcept(false) {
  innermost_region = outer_;
  // TE autocast_exit: update only at the outermost exit of an enabled region with grad enabled.
  if (outer_ == nullptr && enabled_ && c10::GradMode::is_enabled() &&
      std::uncaught_exceptions() == 0) {
    record_->end_forward();
  }
}

std::shared_ptr<Fp8AutocastRecord> Fp8Autocast::active_record() {
  if (innermost_region == nullptr || !innermost_region->enabled_) return nullptr;
  return innermost_region->record_;
}

ContextualFp8Autocast::ContextualFp8Autocast(const torch::nn::Module& model,
                                             bool use_autocast_during_eval)
    : Fp8Autocast(use_autocast_during_eval || model.is_training()) {}

}  // namespace fp8lab::experiments
