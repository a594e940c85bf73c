// Quantize with transpose (gpu/quantize.hpp): one 32 x 32 tile per block of 32 x 8 threads. Each
// thread quantizes 4 elements of a tile column-strip (coalesced fp32 reads along a row), writes
// the row-major codes, parks them in shared memory, and after a barrier writes the transposed
// tile, again along rows. Same per-element code and statistics as gpu::quantize.
#include <stdexcept>

#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"

namespace fp8lab::gpu {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

template <Format F, Overflow M>
__global__ void __launch_bounds__(kTile * kRowsPerPass)
    quantize_transpose_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols,
                              const float* __restrict__ scale_ptr, std::uint8_t* __restrict__ out,
                              std::uint8_t* __restrict__ out_t, float* amax,
                              DeviceQuantizeStats* stats, float* scale_inv) {
  __shared__ std::uint8_t tile[kTile][kTile + 4];
  const float scale = *scale_ptr;
  detail::Counters c;
  const std::int64_t tiles_c = (cols + kTile - 1) / kTile;
  const std::int64_t tiles = ((rows + kTile - 1) / kTile) * tiles_c;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t r0 = (t / tiles_c) * kTile, c0 = (t % tiles_c) * kTile;
    for (int dr = threadIdx.y; dr < kTile; dr += kRowsPerPass) {
      const std::int64_t r = r0 + dr, col = c0 + threadIdx.x;
      if (r < rows && col < cols) {
        const std::uint32_t code = detail::quantize_rn_one<F, M>(x[r * cols + col], scale, c);
        out[r * cols + col] = static_cast<std::uint8_t>(code);
        tile[dr][threadIdx.x] = static_cast<std::uint8_t>(code);
      }
    }
    __syncthreads();
    // Transposed: row (c0 + dc) of out_t holds column (c0 + dc) of the tile.
    for (int dc = threadIdx.y; dc < kTile; dc += kRowsPerPass) {
      const std::int64_t col = c0 + dc, r = r0 + threadIdx.x;
      if (r < rows && col < cols) out_t[col * rows + r] = tile[threadIdx.x][dc];
    }
    __syncthreads();
  }
  detail::flush_counters(c, amax, stats);
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    detail::finish_per_tensor(rows * cols, scale, stats, scale_inv);
  }
}

struct Launch {
  const float* x;
  std::int64_t rows, cols;
  const float* scale;
  const QuantizeOutputs& out;
  std::uint8_t* out_t;
  cudaStream_t stream;
  template <Format F, Overflow M>
  void operator()() const {
    const std::int64_t tiles = ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
    const int blocks = detail::grid_size(tiles * kTile * kRowsPerPass, kTile * kRowsPerPass);
    quantize_transpose_kernel<F, M><<<blocks, dim3(kTile, kRowsPerPass), 0, stream>>>(
        x, rows, cols, scale, out.codes, out_t, out.amax, out.stats, out.scale_inv);
    FP8LAB_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

void quantize_transpose(const float* x, std::int64_t rows, std::int64_t cols, const float* scale,
                        sim::Format format, sim::Overflow mode, const QuantizeOutputs& out,
                        std::uint8_t* codes_transposed, cudaStream_t stream) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("gpu::quantize_transpose: rows = " + std::to_string(rows) +
                                ", cols = " + std::to_string(cols) + "; both must be >= 0");
  }
  if (rows == 0 || cols == 0) return;
  if (x == nullptr || scale == nullptr || out.codes == nullptr || codes_transposed == nullptr) {
    throw std::invalid_argument("gpu::quantize_transpose: x, scale, out.codes and codes_transposed must be device pointers, got null");
  }
  detail::dispatch_format_mode(format, mode, "gpu::quantize_transpose",
                               Launch{x, rows, cols, scale, out, codes_transposed, stream});
}

}  // namespace fp8lab::gpu
