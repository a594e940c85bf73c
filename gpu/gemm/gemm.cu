// gpu::gemm: operand validation, K-block resolution and the model switch (gpu/gemm/gemm.hpp).
#include <stdexcept>
#include <string>

#include "gpu/gemm/gemm_common.cuh"
#include "gpu/gemm/kernels.hpp"
#include "sim/element_count.hpp"

namespace fp8lab::gpu {
namespace gemm_detail {
namespace {

std::string name(char which) { return std::string("gpu::gemm operand ") + which; }

void check(const DeviceGemmOperand& op, char which) {
  if (!sim::is_fp8(op.format)) {
    throw std::invalid_argument(name(which) + ": format must be e4m3 or e5m2, got " +
                                sim::spec(op.format).name);
  }
  if (op.rows < 1 || op.cols < 1) {
    throw std::invalid_argument(name(which) + ": rows and cols must be >= 1, got " +
                                std::to_string(op.rows) + " x " + std::to_string(op.cols));
  }
  sim::checked_element_count(name(which).c_str(), op.rows, op.cols);
  if (op.block_rows < 1 || op.block_cols < 1) {
    throw std::invalid_argument(name(which) + ": block_rows and block_cols must be >= 1, got " +
                                std::to_string(op.block_rows) + " x " +
                                std::to_string(op.block_cols));
  }
  if (op.codes == nullptr || op.scale_inv == nullptr) {
    throw std::invalid_argument(name(which) +
                                ": codes and scale_inv must be device pointers, got null");
  }
}

std::int64_t k_of(const DeviceGemmOperand& op) { return op.k_is_cols ? op.cols : op.rows; }
std::int64_t outer_of(const DeviceGemmOperand& op) { return op.k_is_cols ? op.rows : op.cols; }
std::int64_t run_of(const DeviceGemmOperand& op) {
  return op.k_is_cols ? op.block_cols : op.block_rows;
}

}  // namespace

Problem resolve(const DeviceGemmOperand& a, const DeviceGemmOperand& b,
                const DeviceGemmOptions& options, float* out) {
  require_kernel(options.model);
  check(a, 'A');
  check(b, 'B');
  const std::int64_t k = k_of(a);
  if (k_of(b) != k) {
    throw std::invalid_argument("gpu::gemm: operands disagree on K: A has " + std::to_string(k) +
                                ", B has " + std::to_string(k_of(b)) + " (check k_is_cols)");
  }
  if (out == nullptr)
    throw std::invalid_argument("gpu::gemm: out must be a device pointer, got null");
  sim::checked_element_count("gpu::gemm output C (M x N)", outer_of(a), outer_of(b));
  std::int64_t g = k;
  if (run_of(a) < k) g = run_of(a);
  if (run_of(b) < k && run_of(b) < g) g = run_of(b);
  for (const auto* op : {&a, &b}) {
    const std::int64_t run = run_of(*op);
    if (run < k && run % g != 0) {
      throw std::invalid_argument(
          name(op == &a ? 'A' : 'B') + ": its scale blocks run " + std::to_string(run) +
          " elements along K, not a multiple of the other operand's " + std::to_string(g));
    }
  }
  return Problem{a, b, outer_of(a), outer_of(b), k, g, options, out};
}

DenseProblem resolve_dense(const DeviceDenseOperand& a, const DeviceDenseOperand& b,
                           const DenseGemmOptions& options, float* out) {
  for (const auto* op : {&a, &b}) {
    const std::string which = std::string("gpu::high_precision_gemm operand ") +
                              (op == &a ? 'A' : 'B');
    if (op->rows < 1 || op->cols < 1) {
      throw std::invalid_argument(which + ": rows and cols must be >= 1, got " +
                                  std::to_string(op->rows) + " x " + std::to_string(op->cols));
    }
    sim::checked_element_count(which.c_str(), op->rows, op->cols);
    if (op->data == nullptr)
      throw std::invalid_argument(which + ": data must be a device pointer, got null");
  }
  const std::int64_t k = a.k_is_cols ? a.cols : a.rows;
  if ((b.k_is_cols ? b.cols : b.rows) != k) {
    throw std::invalid_argument(
        "gpu::high_precision_gemm: operands disagree on K (check k_is_cols)");
  }
  if (out == nullptr)
    throw std::invalid_argument("gpu::high_precision_gemm: out must be a device pointer, got null");
  sim::checked_element_count("gpu::high_precision_gemm output C (M x N)",
                             a.k_is_cols ? a.rows : a.cols, b.k_is_cols ? b.rows : b.cols);
  DeviceGemmOptions finish_options;
  finish_options.bf16_output = options.bf16_output;
  finish_options.bias = options.bias;
  return DenseProblem{a,
                      b,
                      a.k_is_cols ? a.rows : a.cols,
                      b.k_is_cols ? b.rows : b.cols,
                      k,
                      options.round_operands_to_bf16,
                      finish_options,
                      out};
}

}  // namespace gemm_detail

void high_precision_gemm(const DeviceDenseOperand& a, const DeviceDenseOperand& b,
                         const DenseGemmOptions& options, float* out, cudaStream_t stream) {
  gemm_detail::launch_high_precision(gemm_detail::resolve_dense(a, b, options, out), stream);
}

void require_kernel(sim::Accumulation model) {
  if (model == sim::Accumulation::kFp32Seq || model == sim::Accumulation::kHopperSplitAccumulator ||
      model == sim::Accumulation::kHopperFastAccum) {
    return;
  }
  throw std::invalid_argument(std::string("gpu::gemm: accumulation `") + sim::to_string(model) +
                              "` has no GPU kernel (gpu/gemm offers fp32_seq, "
                              "hopper_split_accumulator, hopper_fast_accum); run it on the sim "
                              "backend");
}

void gemm(const DeviceGemmOperand& a, const DeviceGemmOperand& b, const DeviceGemmOptions& options,
          float* out, cudaStream_t stream) {
  const gemm_detail::Problem p = gemm_detail::resolve(a, b, options, out);
  switch (options.model) {
    case sim::Accumulation::kFp32Seq: gemm_detail::launch_fp32_seq(p, stream); return;
    case sim::Accumulation::kHopperSplitAccumulator:
      gemm_detail::launch_hopper(p, true, stream);
      return;
    case sim::Accumulation::kHopperFastAccum: gemm_detail::launch_hopper(p, false, stream); return;
    case sim::Accumulation::kExact:
    case sim::Accumulation::kBlackwellBlock: break;
  }
  throw std::invalid_argument("gpu::gemm: unknown model " +
                              std::to_string(static_cast<int>(options.model)));
}

}  // namespace fp8lab::gpu
