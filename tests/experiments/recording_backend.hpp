// A SimBackend that records every quantize call (which tensor, for which GEMM, its input and its
// result), so that a Linear test can compare the operands a trained Fp8Linear quantized with
// what sim's quantizers give for the same tensors. Include after linear_test_support.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "experiments/linear/sim_backend.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::experiments::test {

// The SimBackend, recording every quantize call: which tensor, for which GEMM, its input, its
// result.
struct Recorded {
  Operand tensor;
  Gemm role;
  std::vector<float> x;
  std::int64_t rows, cols;
  sim::QuantizedTensor q;
};
class RecordingBackend final : public LinearBackend {
 public:
  std::string_view name() const override { return "recording-sim"; }
  std::unique_ptr<LinearScalingState> make_state(const recipes::Recipe& r) const override {
    return sim_.make_state(r);
  }
  sim::scaling::QuantizeResult quantize(LinearScalingState& state, Operand tensor, Gemm role,
                                        ConstMatrix x) const override {
    auto result = sim_.quantize(state, tensor, role, x);
    const std::lock_guard lock(mutex_);
    calls.push_back({tensor, role, {x.data.begin(), x.data.end()}, x.rows, x.cols, result.tensor});
    return result;
  }
  void gemm(Gemm role, const sim::QuantizedTensor& a, const sim::QuantizedTensor& b,
            recipes::Accumulation accumulation, MutableMatrix out) const override {
    sim_.gemm(role, a, b, accumulation, out);
  }
  void high_precision_gemm(Gemm role, ConstMatrix a, ConstMatrix b, HighPrecision precision,
                           MutableMatrix out) const override {
    sim_.high_precision_gemm(role, a, b, precision, out);
  }
  void end_forward(LinearScalingState& s) const override { sim_.end_forward(s); }
  void end_backward(LinearScalingState& s) const override { sim_.end_backward(s); }
  mutable std::vector<Recorded> calls;

 private:
  SimBackend sim_;
  mutable std::mutex mutex_;
};

// "" when two quantized tensors hold the same codes, scale bytes and blocks, else the first
// difference.
inline std::string compare(const sim::QuantizedTensor& got, const sim::QuantizedTensor& want) {
  if (got.rows != want.rows || got.cols != want.cols || got.format != want.format)
    return "shape or format differs";
  for (std::size_t i = 0; i < want.data.size(); ++i) {
    if (got.data[i] != want.data[i]) {
      return "code " + std::to_string(i) + " of " + std::to_string(want.data.size()) + ": got " +
             std::to_string(got.data[i]) + ", sim gives " + std::to_string(want.data[i]);
    }
  }
  if (got.scale_e4m3 != want.scale_e4m3) return "E4M3 scale bytes differ";
  if (got.scale_e8m0 != want.scale_e8m0) return "E8M0 scale bytes differ";
  if (got.global_scale != want.global_scale) return "per-tensor scales differ";
  if (got.block_rows != want.block_rows || got.block_cols != want.block_cols)
    return "block shape differs";
  return "";
}

}  // namespace fp8lab::experiments::test
