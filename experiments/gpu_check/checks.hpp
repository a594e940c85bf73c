// GPU kernels against sim/ (docs/numerics.md §4), one function per kernel family. Each runs its random
// and adversarial cases (NaN, ±Inf, zeros, denormals, odd shapes, sizes that are not multiples of
// any block or vector width) on the CPU reference and on the GPU and compares every byte, scale,
// history entry and GEMM output bit for bit. Needs a CUDA device (callers check first).
// Used by `fp8lab check` (experiments/cli/check_command.cpp) and by tests/gpu/.
#pragma once

#include <vector>

#include "experiments/gpu_check/check_result.hpp"

namespace fp8lab::experiments::gpu_check {

// gpu::quantize (fp32), quantize_bf16, quantize_stochastic, quantize_transpose against
// sim::quantize* (codes, transposed codes, statistics, scale_inv), in both formats and every
// overflow mode, and gpu::scaling::delayed_update against sim's fused update over 10 steps.
std::vector<CheckResult> check_quantize_kernels();

// The device casts (gpu::cast_range) against sim's scalar casts on all 2^32 fp32 inputs, both
// formats, every overflow mode (or satfinite only); stochastic with the random word
// philox_block_word(seed, 0, bits) (sim/rng.hpp). About 1-3 s per format and mode on 16 host cores
// (RNE), several times that for stochastic (sim draws one Philox block per input, 3 of its 4 words
// unused: the check takes the scalar definition per pattern).
std::vector<CheckResult> check_casts_all_inputs(bool stochastic, bool every_mode = true);

// gpu::gemm (fp32_seq, hopper split accumulator, hopper fast accum) against sim::gemm for
// per-tensor, rowwise, block 1x128 x 128x128, block 1x128 x 1x128 and MXFP8 operands, in the
// fprop/dgrad/wgrad layouts, fp32 and bf16 outputs, with and without bias, and
// gpu::high_precision_gemm against sim::high_precision_gemm (fp32 and bf16-rounded operands). One
// result per model and scaling kind. on_host: run gpu::host_twin::gemm instead (the kernels' per-output code on
// the host; no device needed).
std::vector<CheckResult> check_gemm_models(bool on_host = false);

// gpu::scaling quantizers against sim::scaling: current (TE, torchao; pow2 on/off), torchao
// axiswise (rowwise/columnwise), TE block (1x128, 128x1, 128x128; pow2 and fp32 scales), MXFP8
// (1x32, 32x1, 32x32; every E8M0 mode), both formats, on clean, special-laden and wide-range
// inputs: codes, scale_inv, scale, E8M0 codes and statistics. on_host: run the host twins
// (gpu::scaling::host_twin; no device needed).
std::vector<CheckResult> check_scaling_quantizers(bool on_host = false);

// The FP4/FP6 quantizers and the RHT (gpu/scaling/fp4.hpp) against sim: MXFP4/MXFP6 (E2M1, E2M3,
// E3M2 x every E8M0 mode and torchao version x 1x32, 32x1, 32x32), NVFP4 (te, torchao x 1x16,
// 16x1, 16x16, with all-zero and Inf tensors), NVFP4 te with stochastic rounding
// (gpu/scaling/fp4_stochastic.hpp: 1x16, 16x1, 16x16, three Philox seeds) and the RHT (both chunk directions), on clean,
// wide-range and special-laden inputs: codes, scale bytes, multipliers, scale_inv, NVFP4's global
// scale, RHT outputs. on_host: the host twins (no device needed).
std::vector<CheckResult> check_fp4_kernels(bool on_host = false);

// cuBLASLt FP8 GEMM (a peer) against sim::gemm's hopper model with the matching accumulation
// (fast_accum on: hopper_fast_accum; off: hopper_split_accumulator) and against fp32_seq:
// tensorwise scales (power of 2, and TE current scaling's non-power-of-2 ones), rowwise and block
// (1x128 activations x 128x128 weights; 1x128 x 1x128), fp32 and bf16 outputs (scales relaid by
// gpu::cublaslt_scale_layout). Results are marked peer: bit-exact counts and ULP statistics, never
// a failure. A combination cuBLASLt (or gpu::CublasLtFp8Gemm, for what cuBLAS documents as
// refused: block scaling with fast accumulation) rejects is reported as "not run: <reason>".
std::vector<CheckResult> check_cublaslt_peer();

}  // namespace fp8lab::experiments::gpu_check
