// cuBLASLt FP8 GEMM measured against sim's models (experiments/gpu_check/checks.hpp).
// Needs CUDA: compiled to nothing in a build without gpu/ (fp8lab_gpu_check globs every .cpp in gpu_check/).
#if FP8LAB_HAVE_CUDA
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "experiments/gpu_check/check_inputs.hpp"
#include "experiments/gpu_check/checks.hpp"
#include "experiments/gpu_check/peer_cases.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "sim/cast.hpp"
#include "sim/gemm/gemm.hpp"

namespace fp8lab::experiments::gpu_check {
namespace {

using sim::Format;

constexpr GemmShape kShapes[] = {{16, 16, 16}, {64, 48, 96}, {128, 256, 1024}, {256, 128, 4096}};
// Block scaling: K below one block, a partial last K block (384 = 3 blocks: BLK128x128's row
// stride pads 3 to 4), M and N not multiples of 128 (partial 128x128 tiles), long K.
constexpr GemmShape kBlockShapes[] = {
    {64, 48, 96}, {128, 128, 512}, {320, 336, 384}, {256, 384, 1040}, {128, 256, 4096}};

gpu::CublasLtScaling cublaslt_scaling(PeerScales s) {
  switch (s) {
    case PeerScales::kPow2Tensorwise:
    case PeerScales::kTeTensorwise: return gpu::CublasLtScaling::kTensorwise;
    case PeerScales::kRowwise: return gpu::CublasLtScaling::kRowwise;
    case PeerScales::kBlock: return gpu::CublasLtScaling::kBlock;
    case PeerScales::kBlock1x128: return gpu::CublasLtScaling::kBlock1x128;
  }
  throw std::logic_error("unknown PeerScales");
}

// One GEMM through cuBLASLt, its output compared bit for bit with sim's (fp32 or bf16 output).
void run_case(CheckResult& r, const GemmShape& s, Format b_format, PeerScales scales, bool fast,
              bool bf16, sim::Accumulation model, std::uint64_t seed, int threads) {
  const auto xa = peer_values(static_cast<std::size_t>(s.m * s.k), seed);
  const auto xb = peer_values(static_cast<std::size_t>(s.n * s.k), seed + 1000);
  const sim::QuantizedTensor ta = quantize_peer_operand(xa, s.m, s.k, Format::E4M3, scales, false);
  const sim::QuantizedTensor tb = quantize_peer_operand(xb, s.n, s.k, b_format, scales, true);
  sim::GemmOptions options;
  options.accumulation = model;
  options.output = bf16 ? sim::GemmOutputType::kBf16 : sim::GemmOutputType::kFp32;
  options.threads = threads;
  const std::vector<float> expected =
      sim::gemm({ta, sim::ReduceDim::kCols}, {tb, sim::ReduceDim::kCols}, options);
  gpu::CublasLtGemmShape shape;
  shape.m = s.m;
  shape.n = s.n;
  shape.k = s.k;
  shape.a_format = Format::E4M3;
  shape.b_format = b_format;
  shape.scaling = cublaslt_scaling(scales);
  shape.fast_accum = fast;
  shape.bf16_output = bf16;
  std::string where = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                      " B " + sim::spec(b_format).name + (bf16 ? " bf16-out" : " fp32-out");
  try {
    gpu::CublasLtFp8Gemm gemm(shape);
    // sim's scale_inv relaid as cuBLASLt reads it (1x128: transposed; 128x128: row stride padded to 4).
    const gpu::DeviceBuffer<float> dsa(
        gpu::cublaslt_scale_layout(ta, gpu::a_scale_mode(shape.scaling)));
    const gpu::DeviceBuffer<float> dsb(
        gpu::cublaslt_scale_layout(tb, gpu::b_scale_mode(shape.scaling)));
    const gpu::DeviceBuffer<std::uint8_t> da(ta.data), db(tb.data);
    gpu::DeviceBuffer<float> dout32(bf16 ? 0 : expected.size());
    gpu::DeviceBuffer<std::uint16_t> dout16(bf16 ? expected.size() : 0);
    gemm.run({da.get(), dsa.get(), db.get(), dsb.get(),
              bf16 ? static_cast<void*>(dout16.get()) : dout32.get()});
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    where = gemm.describe();
    std::vector<float> actual;
    if (bf16) {
      const std::vector<std::uint16_t> bits = dout16.download();
      actual.reserve(bits.size());
      for (const std::uint16_t b : bits) actual.push_back(sim::bf16_to_fp32(b));
    } else {
      actual = dout32.download();
    }
    ++r.cases;
    compare_matrix(r, where, expected, actual.data(), s.n, {"model", "cublaslt"});
  } catch (const std::exception& error) {
    if (r.first.size() < CheckResult::kKeep)
      r.first.push_back("not run: " + where + ": " + error.what());
  }
}

}  // namespace

std::vector<CheckResult> check_cublaslt_peer() {
  std::vector<CheckResult> results;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const PeerScales scales :
       {PeerScales::kPow2Tensorwise, PeerScales::kTeTensorwise, PeerScales::kRowwise,
        PeerScales::kBlock, PeerScales::kBlock1x128}) {
    const bool block = scales == PeerScales::kBlock || scales == PeerScales::kBlock1x128;
    for (const bool fast : {false, true}) {
      for (const sim::Accumulation model :
           {fast ? sim::Accumulation::kHopperFastAccum : sim::Accumulation::kHopperSplitAccumulator,
            sim::Accumulation::kFp32Seq}) {
        CheckResult r;
        r.peer = true;
        r.kernel = std::string("cublaslt ") + to_string(scales) +
                   (fast ? " fast_accum" : " split_acc") + " vs " + sim::to_string(model);
        std::uint64_t seed = 11;
        for (const GemmShape& s : block ? std::span<const GemmShape>(kBlockShapes)
                                        : std::span<const GemmShape>(kShapes)) {
          for (const Format b_format : {Format::E4M3, Format::E5M2}) {
            for (const bool bf16 : {false, true})
              run_case(r, s, b_format, scales, fast, bf16, model, seed++, threads);
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
