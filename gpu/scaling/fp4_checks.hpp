// Argument checks shared by the FP4/FP6 device entry points (fp4.cu) and their host twins
// (fp4_host_twin.cu), so that both refuse the same calls with the same messages.
#pragma once

#include <stdexcept>
#include <string>

#include "gpu/quantize_common.cuh"
#include "gpu/scaling/fp4_rules.cuh"

namespace fp8lab::gpu::scaling::detail {

inline void check_fp4(const char* function, const float* x, std::int64_t rows, std::int64_t cols,
                      std::int64_t br, std::int64_t bc, sim::Format format, const Fp4Outputs& out,
                      bool nvfp4) {
  gpu::detail::check_blocked_shape(function, rows, cols, br, bc);
  if (!sim::is_subbyte(format)) {
    throw std::invalid_argument(std::string(function) + ": format " + sim::spec(format).name +
                                " is not a sub-byte format (e2m1, e2m3, e3m2)");
  }
  if (nvfp4 && !((br == 1 && bc == 16) || (br == 16 && bc == 1) || (br == 16 && bc == 16))) {
    throw std::invalid_argument(std::string(function) + ": block = " + std::to_string(br) + " x " +
                                std::to_string(bc) + "; accepted: 1 x 16, 16 x 1, 16 x 16");
  }
  if (x == nullptr || out.codes == nullptr || out.scale_bytes == nullptr ||
      (nvfp4 && out.global == nullptr)) {
    throw std::invalid_argument(std::string(function) +
                                ": x, out.codes, out.scale_bytes (and for NVFP4 out.global) "
                                "must be set, got null");
  }
}

inline void check_rht(const char* function, const float* x, std::int64_t rows, std::int64_t cols,
                      bool chunks_down_rows, const float* y) {
  gpu::detail::check_blocked_shape(function, rows, cols, 1, 1);
  const std::int64_t chunked = chunks_down_rows ? rows : cols;
  if (chunked % kRhtSize != 0) {
    throw std::invalid_argument(
        std::string(function) + ": " + (chunks_down_rows ? "rows" : "cols") + " = " +
        std::to_string(chunked) + " must be a multiple of 16 (the chunks run along it)");
  }
  if (x == nullptr || y == nullptr) {
    throw std::invalid_argument(std::string(function) + ": x and y must be set, got null");
  }
}

// Element (o, i) of chunk c: its index in a [rows, cols] row-major tensor.
FP8LAB_HD inline std::int64_t rht_index(std::int64_t o, std::int64_t c0, int i, std::int64_t cols,
                                        bool chunks_down_rows) {
  return chunks_down_rows ? (c0 + i) * cols + o : o * cols + c0 + i;
}

}  // namespace fp8lab::gpu::scaling::detail
