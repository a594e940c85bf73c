// NVFP4 with stochastic rounding of the E2M1 codes, TE's NVFP4BlockScaling treatment of gradients
// (unless disable_stochastic_rounding), on the GPU:
//
//   gpu::scaling::quantize_nvfp4_stochastic  must equal sim::scaling::quantize_nvfp4(x, rows, cols,
//                                             block, Nvfp4Mode::kTe, &StochasticStream{seed,
//                                             stream}): codes, scale bytes, multipliers,
//                                             scale_inv, global
//
// Two passes, as sim: gpu::scaling::quantize_nvfp4 (te) chooses the scales (and writes RN codes),
// then one thread per Philox4x32-10 word re-rounds its four elements (fp4_stochastic.cuh). The
// random bits are a pure function of (seed, stream, element index): sim/rng.hpp's mapping, so CPU,
// GPU and any thread layout draw the same bits (TE's own stream follows its thread layout and is
// not reproduced: sim/fp4_stochastic.hpp). torchao's nvfp4_quantize (the torchao mode) has no
// stochastic rounding, so none here; nvfp4_mode torchao_training (torchao's prototype
// NVFP4TrainingConfig) has it, and the GPU refuses that mode (docs/fp4.md).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/scaling/fp4.hpp"  // Fp4Outputs

namespace fp8lab::gpu::scaling {

// x: fp32 row-major [rows, cols], device pointers; block 1 x 16, 16 x 1 or 16 x 16
// (std::invalid_argument otherwise, as quantize_nvfp4); out.global must be set.
void quantize_nvfp4_stochastic(const float* x, std::int64_t rows, std::int64_t cols,
                               std::int64_t block_rows, std::int64_t block_cols, std::uint64_t seed,
                               std::uint64_t stream, const Fp4Outputs& out,
                               cudaStream_t cuda_stream = nullptr);

// The same over host pointers (fp4_stochastic_host_twin.cu), and the per-element rule alone.
namespace host_twin {
void quantize_nvfp4_stochastic(const float* x, std::int64_t rows, std::int64_t cols,
                               std::int64_t block_rows, std::int64_t block_cols, std::uint64_t seed,
                               std::uint64_t stream, const Fp4Outputs& out);
std::uint8_t e2m1_stochastic_code(float x, std::uint8_t random_byte);
}  // namespace host_twin

}  // namespace fp8lab::gpu::scaling
