// gpu::scaling::host_twin for NVFP4 stochastic rounding (gpu/scaling/fp4_stochastic.hpp):
// fp4_stochastic.cuh's per-word code, word after word, on host pointers.
#include "gpu/scaling/fp4_checks.hpp"
#include "gpu/scaling/fp4_stochastic.cuh"
#include "gpu/scaling/fp4_stochastic.hpp"

namespace fp8lab::gpu::scaling::host_twin {

void quantize_nvfp4_stochastic(const float* x, std::int64_t rows, std::int64_t cols,
                               std::int64_t block_rows, std::int64_t block_cols, std::uint64_t seed,
                               std::uint64_t stream, const Fp4Outputs& out) {
  detail::check_fp4("host_twin::quantize_nvfp4_stochastic", x, rows, cols, block_rows, block_cols,
                    Format::E2M1, out, true);
  host_twin::quantize_nvfp4(x, rows, cols, block_rows, block_cols, Nvfp4Mode::kTe, out);
  const Nvfp4Global g{out.global[0], out.global[1], out.global[2]};
  for (std::int64_t w = 0; w < (rows * cols + 3) / 4; ++w) {
    nvfp4_stochastic_word(x, rows, cols, block_rows, block_cols, w, seed, stream, g,
                          out.scale_bytes, out.codes);
  }
}

std::uint8_t e2m1_stochastic_code(float x, std::uint8_t random_byte) {
  return scaling::e2m1_stochastic_code(x, random_byte);
}

}  // namespace fp8lab::gpu::scaling::host_twin
