// cuBLASLt FP8 GEMM measured against sim's models (experiments/gpu_check/checks.hpp).
// Needs CUDA: compiled to nothing in a build without gpu/ (experiments/ globs every .cpp).
#if FP8LAB_HAVE_CUDA
#include <bit>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "experiments/gpu_check/checks.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/rowwise.hpp"

namespace fp8lab::experiments::gpu_check {
namespace {

using sim::Format;

struct Shape {
  std::int64_t m, n, k;
};
constexpr Shape kShapes[] = {{16, 16, 16}, {64, 48, 96}, {128, 256, 1024}, {256, 128, 4096}};
// Block scaling: K a multiple of 512 (ceil(K/128) a multiple of 4, see gpu/cublaslt.hpp).
constexpr Shape kBlockShapes[] = {{128, 128, 512}, {256, 384, 1024}, {128, 256, 4096}};

std::vector<float> values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = std::ldexp(normal(rng), static_cast<int>(rng() % 8) - 4);
  return x;
}

enum class Scales { kPow2Tensorwise, kTeTensorwise, kRowwise, kBlock };
const char* name(Scales s) {
  switch (s) {
    case Scales::kPow2Tensorwise: return "tensorwise pow2";
    case Scales::kTeTensorwise: return "tensorwise te";
    case Scales::kRowwise: return "rowwise";
    case Scales::kBlock: return "block 1x128 x 128x128";
  }
  return "?";
}

sim::QuantizedTensor quantize(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                              Format f, Scales s, bool weight) {
  switch (s) {
    case Scales::kBlock: {
      sim::scaling::BlockScalingConfig config;
      config.block = weight ? sim::scaling::kBlock128x128 : sim::scaling::kBlock1x128;
      return sim::scaling::quantize_block_te(x, rows, cols, f, config).tensor;
    }
    case Scales::kPow2Tensorwise: return sim::scaling::quantize_current_te(x, rows, cols, f, true).tensor;
    case Scales::kTeTensorwise: return sim::scaling::quantize_current_te(x, rows, cols, f).tensor;
    case Scales::kRowwise:
      return sim::scaling::quantize_axiswise_torchao(x, rows, cols, sim::scaling::ScaleAxis::kRowwise, f, true).tensor;
  }
  throw std::logic_error("unknown Scales");
}

}  // namespace

std::vector<CheckResult> check_cublaslt_peer() {
  std::vector<CheckResult> results;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const Scales scales : {Scales::kPow2Tensorwise, Scales::kTeTensorwise, Scales::kRowwise, Scales::kBlock}) {
    for (const bool fast : {false, true}) {
      for (const sim::Accumulation model :
           {fast ? sim::Accumulation::kHopperFastAccum : sim::Accumulation::kHopperSplitAccumulator,
            sim::Accumulation::kFp32Seq}) {
        CheckResult r;
        r.peer = true;
        r.kernel = std::string("cublaslt ") + name(scales) + (fast ? " fast_accum" : " split_acc") +
                   " vs " + sim::to_string(model);
        std::uint64_t seed = 11;
        const bool block = scales == Scales::kBlock;
        for (const Shape& s : block ? std::span<const Shape>(kBlockShapes) : std::span<const Shape>(kShapes)) {
          for (const Format b_format : {Format::E4M3, Format::E5M2}) {
            const auto xa = values(static_cast<std::size_t>(s.m * s.k), seed++);
            const auto xb = values(static_cast<std::size_t>(s.n * s.k), seed++);
            const sim::QuantizedTensor ta = quantize(xa, s.m, s.k, Format::E4M3, scales, false);
            const sim::QuantizedTensor tb = quantize(xb, s.n, s.k, b_format, scales, true);
            sim::GemmOptions options;
            options.accumulation = model;
            options.threads = threads;
            const std::vector<float> expected =
                sim::gemm({ta, sim::ReduceDim::kCols}, {tb, sim::ReduceDim::kCols}, options);
            gpu::CublasLtGemmShape shape;
            shape.m = s.m;
            shape.n = s.n;
            shape.k = s.k;
            shape.a_format = Format::E4M3;
            shape.b_format = b_format;
            shape.scaling = block ? gpu::CublasLtScaling::kBlock
                            : scales == Scales::kRowwise ? gpu::CublasLtScaling::kRowwise
                                                         : gpu::CublasLtScaling::kTensorwise;
            // A's 1x128 scales go outer-dimension-major ([K/128][M]); B's 128x128 stay
            // [N/128][K/128] with K contiguous (gpu/cublaslt.hpp).
            std::vector<float> a_scales = ta.scale_inv;
            if (block) {
              const std::size_t kb = static_cast<std::size_t>(ta.scale_cols()), m = static_cast<std::size_t>(s.m);
              for (std::size_t i = 0; i < m; ++i) {
                for (std::size_t j = 0; j < kb; ++j) a_scales[j * m + i] = ta.scale_inv[i * kb + j];
              }
            }
            shape.fast_accum = fast;
            try {
              gpu::CublasLtFp8Gemm gemm(shape);
              gpu::DeviceBuffer<std::uint8_t> da(ta.data), db(tb.data);
              gpu::DeviceBuffer<float> dsa(a_scales), dsb(tb.scale_inv), dout(expected.size());
              gemm.run(da.get(), dsa.get(), db.get(), dsb.get(), dout.get());
              FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
              const std::vector<float> actual = dout.download();
              ++r.cases;
              for (std::size_t i = 0; i < expected.size(); ++i) {
                ++r.compared;
                if (expected[i] != 0.0f) ++r.nonzero;
                if (std::bit_cast<std::uint32_t>(expected[i]) != std::bit_cast<std::uint32_t>(actual[i])) {
                  r.add_mismatch(gemm.describe() + " C[" + std::to_string(i / static_cast<std::size_t>(s.n)) +
                                     "," + std::to_string(i % static_cast<std::size_t>(s.n)) + "]: model " +
                                     bits_text(expected[i]) + ", cublaslt " + bits_text(actual[i]),
                                 ulp_distance(expected[i], actual[i]));
                }
              }
            } catch (const std::exception& error) {
              if (r.first.size() < CheckResult::kKeep) r.first.push_back(std::string("not run: ") + error.what());
            }
          }
        }
        results.push_back(std::move(r));
      }
    }
  }
  return results;
}

}  // namespace fp8lab::experiments::gpu_check

#endif  // FP8LAB_HAVE_CUDA
