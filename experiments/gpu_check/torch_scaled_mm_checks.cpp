// torch._scaled_mm measured against sim's Hopper models (experiments/gpu_check/torch_checks.hpp).
// Needs CUDA: compiled to nothing in a build without gpu/ (fp8lab_gpu_check globs every .cpp in gpu_check/).
#if FP8LAB_HAVE_CUDA
#include <torch/torch.h>

#include <string>
#include <thread>

#include "experiments/gpu_check/check_inputs.hpp"
#include "experiments/gpu_check/peer_cases.hpp"
#include "experiments/gpu_check/torch_checks.hpp"
#include "sim/gemm/gemm.hpp"

namespace fp8lab::experiments::gpu_check {
namespace {

using sim::Format;

constexpr GemmShape kShapes[] = {{16, 16, 32}, {64, 48, 96}, {128, 256, 1024}, {256, 128, 4096}};

// FP8 codes as a CUDA float8 tensor of the given shape.
torch::Tensor fp8_tensor(const sim::QuantizedTensor& t) {
  const auto dtype = t.format == Format::E4M3 ? torch::kFloat8_e4m3fn : torch::kFloat8_e5m2;
  return torch::from_blob(const_cast<std::uint8_t*>(t.data.data()), {t.rows, t.cols}, torch::kUInt8)
      .clone()
      .view(dtype)
      .to(torch::kCUDA);
}

torch::Tensor scales(const sim::QuantizedTensor& t, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(t.scale_inv.data()), shape, torch::kFloat32)
      .clone()
      .to(torch::kCUDA);
}

}  // namespace

std::vector<CheckResult> check_torch_scaled_mm_peer() {
  std::vector<CheckResult> results;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const bool rowwise : {false, true}) {
    for (const bool fast : {false, true}) {
      const sim::Accumulation model = fast ? sim::Accumulation::kHopperFastAccum
                                           : sim::Accumulation::kHopperSplitAccumulator;
      CheckResult r;
      r.peer = true;
      r.kernel = std::string("torch._scaled_mm ") + (rowwise ? "rowwise" : "tensorwise") +
                 (fast ? " fast_accum" : " split_acc") + " vs " + sim::to_string(model);
      if (!torch::cuda::is_available()) {
        r.first.push_back("not run: LibTorch sees no CUDA device");
        results.push_back(std::move(r));
        continue;
      }
      std::uint64_t seed = 31;
      for (const GemmShape& s : kShapes) {
        // torch rejects e5m2 x e5m2 and, for rowwise, anything but e4m3 x e4m3 on some builds:
        // try both B formats and report what it refused.
        for (const Format b_format : {Format::E4M3, Format::E5M2}) {
          const auto xa = peer_values(static_cast<std::size_t>(s.m * s.k), seed++);
          const auto xb = peer_values(static_cast<std::size_t>(s.n * s.k), seed++);
          const PeerScales kind = rowwise ? PeerScales::kRowwise : PeerScales::kPow2Tensorwise;
          const sim::QuantizedTensor ta =
              quantize_peer_operand(xa, s.m, s.k, Format::E4M3, kind, false);
          const sim::QuantizedTensor tb = quantize_peer_operand(xb, s.n, s.k, b_format, kind, true);
          sim::GemmOptions options;
          options.accumulation = model;
          options.threads = threads;
          const std::vector<float> expected =
              sim::gemm({ta, sim::ReduceDim::kCols}, {tb, sim::ReduceDim::kCols}, options);
          const std::string where = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                    std::to_string(s.k) + " B " + sim::spec(b_format).name;
          try {
            const torch::Tensor scale_a = rowwise ? scales(ta, {s.m, 1}) : scales(ta, {});
            const torch::Tensor scale_b = rowwise ? scales(tb, {1, s.n}) : scales(tb, {});
            const torch::Tensor out = at::_scaled_mm(fp8_tensor(ta), fp8_tensor(tb).t(), scale_a,
                                                     scale_b, {}, {}, torch::kFloat32, fast)
                                          .to(torch::kCPU)
                                          .contiguous();
            const float* actual = out.data_ptr<float>();
            ++r.cases;
            compare_matrix(r, where, expected, actual, s.n, {"model", "torch"});
          } catch (const std::exception& error) {
            if (r.first.size() < CheckResult::kKeep) {
              r.first.push_back("not run: " + where + ": " +
                                std::string(error.what()).substr(0, 200));
            }
          }
        }
      }
      results.push_back(std::move(r));
    }
  }
  return results;
}

}  // namespace fp8lab::experiments::gpu_check

#endif  // FP8LAB_HAVE_CUDA
