// Quantize with transpose (gpu/quantize.hpp). Shapes whose rows and cols are multiples of 64, with
// aligned pointers, run tiles_kernel (64 x 64 tiles, 16-byte loads, gpu::quantize's fast path,
// 4-byte stores both ways); every other shape runs quantize_transpose_kernel: one 32 x 32 tile per
// block of 32 x 8 threads. Each thread quantizes 4 elements of a tile column-strip (coalesced fp32
// reads along a row), writes the row-major codes, parks them in shared memory, and after a barrier
// writes the transposed tile, again along rows. Same statistics as gpu::quantize.
#include <stdexcept>

#include "gpu/cuda_check.hpp"
#include "gpu/quantize_common.cuh"
#include "sim/element_count.hpp"

namespace fp8lab::gpu {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

template <Format F, Overflow M>
__global__ void __launch_bounds__(kTile* kRowsPerPass)
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

// 64 x 64 tiles, grid-stride, 256 threads. Thread t loads the 16-byte column t % 16 of tile rows
// t / 16 + 16 j (j < 4: all four loads in flight; each load instruction of a warp reads two
// 256-byte row runs), quantizes each four through quantize_rn_group, stores them row-major (4
// bytes) and into a shared tile of code words. After a barrier it reads the 4 x 4 codes of tile
// rows 4 (t % 16) .. + 3 and columns 4 (t / 16) .. + 3, transposes them with byte permutes, and
// stores 4 bytes into each of the 4 transposed rows (16 lanes write 64 contiguous bytes).
constexpr int kBig = 64;

template <Format F, Overflow M>
__global__ void __launch_bounds__(256)
    tiles_kernel(const float* __restrict__ x, std::int64_t rows, std::int64_t cols,
                 const float* __restrict__ scale_ptr, std::uint8_t* __restrict__ out,
                 std::uint8_t* __restrict__ out_t, float* amax, DeviceQuantizeStats* stats,
                 float* scale_inv) {
  __shared__ std::uint32_t
      tile[kBig][kBig / 4 + 1];  // 4 codes per word; odd stride: fewer bank conflicts
  const float scale = *scale_ptr;
  detail::Counters c;
  const auto tiles_c = static_cast<std::uint32_t>(cols / kBig);
  const auto tiles = static_cast<std::uint32_t>(rows / kBig) *
                     tiles_c;  // < 2^32 (checked by the caller)
  const int t = static_cast<int>(threadIdx.x);
  const int load_row = t / 16, load_col = (t % 16) * 4;
  const int row_block = t % 16, col_block = t / 16;
  for (std::uint32_t i = blockIdx.x; i < tiles; i += gridDim.x) {
    const std::int64_t r0 = static_cast<std::int64_t>(i / tiles_c) * kBig;
    const std::int64_t c0 = static_cast<std::int64_t>(i % tiles_c) * kBig;
    const std::int64_t first = (r0 + load_row) * cols + c0 + load_col;
    float4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = *reinterpret_cast<const float4*>(x + first + 16 * j * cols);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float x4[4] = {v[j].x, v[j].y, v[j].z, v[j].w};
      std::uint32_t word[1];
      detail::quantize_rn_group<F, M, 4>(x4, 0, scale, word, c);
      *reinterpret_cast<std::uint32_t*>(out + first + 16 * j * cols) = word[0];
      tile[load_row + 16 * j][load_col / 4] = word[0];
    }
    __syncthreads();
    // w[k]: the codes of tile row 4 row_block + k, columns 4 col_block .. + 3 (byte b: column + b).
    std::uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = tile[4 * row_block + k][col_block];
    const std::uint32_t lo01 = __byte_perm(w[0], w[1], 0x5140),
                        hi01 = __byte_perm(w[0], w[1], 0x7362);
    const std::uint32_t lo23 = __byte_perm(w[2], w[3], 0x5140),
                        hi23 = __byte_perm(w[2], w[3], 0x7362);
    // Transposed row b (tile column 4 col_block + b): byte k = w[k]'s byte b.
    const std::uint32_t column[4] = {
        __byte_perm(lo01, lo23, 0x5410), __byte_perm(lo01, lo23, 0x7632),
        __byte_perm(hi01, hi23, 0x5410), __byte_perm(hi01, hi23, 0x7632)};
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      *reinterpret_cast<std::uint32_t*>(out_t + (c0 + 4 * col_block + b) * rows + r0 +
                                        4 * row_block) = column[b];
    }
    __syncthreads();
  }
  detail::flush_counters(c, amax, stats);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    detail::finish_per_tensor(rows * cols, scale, stats, scale_inv);
}

// Whether tiles_kernel applies: whole 64 x 64 tiles (fewer than 2^32), x 16-byte aligned, both
// code outputs 4-byte aligned.
bool tiles_apply(const float* x, std::int64_t rows, std::int64_t cols, const std::uint8_t* out,
                 const std::uint8_t* out_t) {
  return rows % kBig == 0 && cols % kBig == 0 &&
         (rows / kBig) * (cols / kBig) < (std::int64_t{1} << 32) &&
         reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(out) % 4 == 0 &&
         reinterpret_cast<std::uintptr_t>(out_t) % 4 == 0;
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
    if (tiles_apply(x, rows, cols, out.codes, out_t)) {
      const auto kernel = tiles_kernel<F, M>;
      static const int resident = detail::resident_blocks(kernel, 256);
      const std::int64_t tiles = (rows / kBig) * (cols / kBig);
      kernel<<<detail::grid_size(tiles * 256, 256, resident), 256, 0, stream>>>(
          x, rows, cols, scale, out.codes, out_t, out.amax, out.stats, out.scale_inv);
      FP8LAB_CUDA_CHECK_LAUNCH();
      return;
    }
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
  if (sim::checked_element_count("gpu::quantize_transpose", rows, cols) == 0) return;
  if (x == nullptr || scale == nullptr || out.codes == nullptr || codes_transposed == nullptr) {
    throw std::invalid_argument("gpu::quantize_transpose: x, scale, out.codes and codes_transposed "
                                "must be device pointers, got null");
  }
  detail::dispatch_format_mode(format, mode, "gpu::quantize_transpose",
                               Launch{x, rows, cols, scale, out, codes_transposed, stream});
}

}  // namespace fp8lab::gpu
