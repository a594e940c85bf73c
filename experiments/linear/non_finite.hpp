// Where the first NaN or Inf of a run appeared (issue 18 §4): the step, forward or backward, the
// Linear, the tensor and the GEMM that read it, the amax/scale history of that tensor just before,
// and the values around the first bad element (index, value, bits).
//
// Cheap while every value is finite: a quantized operand is looked at only when its quantizer's
// own statistics say so (QuantizeStats: amax +Inf, or NaN codes); an operand a GEMM reads in high
// precision is scanned once per call (O(elements), against the GEMM's O(elements * K)), and only
// until the first site is found. The history is one small ring per (tensor, GEMM) of each Linear,
// filled from figures the quantizer computed anyway.
//
// No LibTorch: the Linear's autograd function (linear_function.cpp) calls these with host views.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "sim/scaling/common.hpp"

namespace fp8lab::experiments {

// One quantization of a tensor: its amax and the range of its scales (one value per tensor for
// per-tensor scalings).
struct ScaleHistoryEntry {
  std::int64_t step = 0;
  float amax = 0.0f;
  float scale_min = 0.0f;
  float scale_max = 0.0f;
};
inline constexpr std::size_t kScaleHistoryLength = 8;  // entries kept per (tensor, GEMM)

struct SurroundingValue {
  std::int64_t index = 0;  // row-major index into the [rows, cols] operand
  float value = 0.0f;
  std::uint32_t bits = 0;  // the float32's bits
};
inline constexpr std::int64_t kSurroundingValues = 2;  // on each side of the first bad element

struct NonFiniteSite {
  std::int64_t step = 0;
  bool backward = false;  // grad_output is the backward pass's tensor; input/weight forward
  std::string layer;      // the Linear's fully qualified name
  Operand tensor = Operand::kInput;
  Gemm gemm = Gemm::kFprop;  // the GEMM that was about to read it
  bool quantized = false;    // true: seen by the quantizer; false: a high-precision operand
  std::int64_t rows = 0, cols = 0;
  std::int64_t first_index = 0;  // row-major
  std::uint64_t nan_count = 0, inf_count = 0;
  std::vector<ScaleHistoryEntry> history;  // this (layer, tensor, GEMM)'s last quantizations
  std::vector<SurroundingValue> values;    // first_index +- kSurroundingValues, clipped
};

// A test-only fault: one NaN written into `layer`'s input (forward) or grad_output (backward) on
// `step`, at the middle element (numel / 2), before anything reads it.
struct FaultInjection {
  std::string layer;
  std::int64_t step = 0;
  bool backward = true;
};

// One per run, shared by every Linear of the model: the current step and the first site.
class NonFiniteWatch {
 public:
  void set_step(std::int64_t step) { step_ = step; }
  std::int64_t step() const { return step_; }
  bool found() const;
  std::optional<NonFiniteSite> first() const;
  // Keeps `site` if it is the first.
  void record(NonFiniteSite site);
  std::optional<FaultInjection> injection;

 private:
  std::int64_t step_ = 0;
  mutable std::mutex mutex_;  // backward may run on autograd's worker thread
  std::optional<NonFiniteSite> first_;
};

// One per Linear: its name, the run's watch, and the scale history of each (tensor, GEMM).
class LayerWatch {
 public:
  LayerWatch(std::string layer, std::shared_ptr<NonFiniteWatch> run);
  const std::string& layer() const { return layer_; }

  // After `x` (host memory) was quantized for `gemm`: adds the quantization to the history, and
  // records the site if x held a non-finite value and none was found before.
  void after_quantize(Operand tensor, Gemm gemm, ConstMatrix x,
                      const sim::scaling::QuantizeResult& result);
  // Before a high-precision GEMM reads `x` (host memory): records the site if x holds a
  // non-finite value and none was found before.
  void check_operand(Operand tensor, Gemm gemm, ConstMatrix x);
  // Whether the run's fault injection targets this Linear's forward (false) or backward (true)
  // pass at the current step.
  bool inject_now(bool backward) const;

 private:
  void record_site(Operand tensor, Gemm gemm, ConstMatrix x, bool quantized);

  std::string layer_;
  std::shared_ptr<NonFiniteWatch> run_;
  std::array<std::deque<ScaleHistoryEntry>, 9> history_;  // [tensor * 3 + gemm]
};

// The first index of a non-finite element of x, with the NaN and Inf counts; nullopt when all are
// finite.
struct NonFiniteScan {
  std::int64_t first_index = 0;
  std::uint64_t nan_count = 0, inf_count = 0;
};
std::optional<NonFiniteScan> scan_non_finite(std::span<const float> x);

}  // namespace fp8lab::experiments
