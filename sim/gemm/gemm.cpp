// gemm() / gemm_into(): validation, the model switch and the common output epilogue (gemm.hpp).
#include "sim/gemm/gemm.hpp"

#include <stdexcept>
#include <string>

#include "sim/gemm/plan.hpp"
#include "sim/gemm/tile_loop.hpp"

namespace fp8lab::sim {

Accumulation parse_accumulation(std::string_view name) {
  for (Accumulation a :
       {Accumulation::kFp32Seq, Accumulation::kHopperSplitAccumulator,
        Accumulation::kHopperFastAccum, Accumulation::kExact, Accumulation::kBlackwellBlock}) {
    if (name == to_string(a)) return a;
  }
  throw std::invalid_argument("unknown GEMM accumulation '" + std::string(name) +
                              "'; accepted: fp32_seq, hopper_split_accumulator, "
                              "hopper_fast_accum, exact, blackwell_block");
}

void gemm_into(const GemmOperand& a, const GemmOperand& b, const GemmOptions& options,
               std::span<float> out) {
  gemm_detail::check_threads(options.threads);
  const GemmShape shape = gemm_shape(a, b);
  gemm_detail::check_output(shape, options.bias, out.size());
  switch (options.accumulation) {
    case Accumulation::kFp32Seq: {
      const auto plan = gemm_detail::make_quantized_plan(
          a, b, options.pad_inner_dim, gemm_detail::Packing::kValues, options.threads);
      gemm_detail::for_each_tile(plan, options.threads, out.data(), options.bias, options.output,
                                 gemm_detail::fp32_seq_tile);
      break;
    }
    case Accumulation::kHopperSplitAccumulator:
    case Accumulation::kHopperFastAccum: {
      if (is_subbyte(a.tensor.format) || is_subbyte(b.tensor.format)) {
        throw std::invalid_argument(
            std::string("gemm: accumulation ") + to_string(options.accumulation) +
            " models Hopper's FP8 MMA, which takes no FP4/FP6 operands (" +
            spec(a.tensor.format).name + " x " + spec(b.tensor.format).name +
            "); accepted for them: fp32_seq, exact, blackwell_block");
      }
      const bool split = options.accumulation == Accumulation::kHopperSplitAccumulator;
      // The round-toward-zero kernel where the CPU has it and no operand holds NaN or Inf.
      const bool rz = gemm_detail::hopper_rz_available() &&
                      !gemm_detail::has_non_finite_code(a.tensor) &&
                      !gemm_detail::has_non_finite_code(b.tensor);
      const auto plan = gemm_detail::make_quantized_plan(a, b, options.pad_inner_dim,
                                                         rz ? gemm_detail::Packing::kHopperRz
                                                            : gemm_detail::Packing::kHopperPowers,
                                                         options.threads);
      gemm_detail::for_each_tile(plan, options.threads, out.data(), options.bias, options.output,
                                 [split, rz](const gemm_detail::TileArgs& args) {
                                   if (rz) {
                                     gemm_detail::hopper_rz_tile(args, split);
                                   } else {
                                     gemm_detail::hopper_tile(args, split);
                                   }
                                 });
      break;
    }
    case Accumulation::kExact: {
      const std::vector<double> exact = gemm_exact(a, b, {}, options.threads);
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(exact[i]);
      gemm_detail::finish_output(out, shape.n, options.bias, options.output, options.threads);
      break;
    }
    case Accumulation::kBlackwellBlock:
      if (options.pad_inner_dim) {
        throw std::invalid_argument("gemm: accumulation blackwell_block takes no pad_inner_dim");
      }
      gemm_detail::block_scaled_quantized_gemm(a, b, options, out);
      break;
  }
}

std::vector<float> gemm(const GemmOperand& a, const GemmOperand& b, const GemmOptions& options) {
  const GemmShape shape = gemm_shape(a, b);
  std::vector<float> out(static_cast<std::size_t>(shape.m * shape.n));
  gemm_into(a, b, options, out);
  return out;
}

}  // namespace fp8lab::sim
