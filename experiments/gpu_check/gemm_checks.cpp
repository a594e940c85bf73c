// gpu::gemm against sim::gemm (experiments/gpu_check/checks.hpp). Operands come from sim's own
// scaling recipes (sim/scaling/), so each scaling kind is exercised with the block layouts the
// recipes really produce, in the three layouts of a Linear (gemm.hpp: fprop, dgrad, wgrad).
// Needs CUDA: compiled to nothing in a build without gpu/ (fp8lab_gpu_check globs every .cpp in gpu_check/).
#if FP8LAB_HAVE_CUDA
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "experiments/gpu_check/check_inputs.hpp"
#include "experiments/gpu_check/checks.hpp"
#include "experiments/gpu_check/device_tensor.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/gemm/gemm.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/rowwise.hpp"

namespace fp8lab::experiments::gpu_check {
namespace {

using sim::Format;
using sim::scaling::ScaleAxis;

// Odd sizes around the kernels' 128-wide tiles, 8-deep K steps, 32-element groups and 128-element
// promotion and block lengths.
constexpr GemmShape kShapes[] = {
    {1, 1, 1}, {3, 5, 31}, {37, 29, 100}, {130, 129, 257}, {64, 200, 1024}};

// Activations with a per-row spread of magnitudes, plus rare specials (NaN, ±Inf, denormals,
// zeros) so that NaN rows, saturated codes and underflow reach the GEMMs.
std::vector<float> operand_values(std::size_t n, std::uint64_t seed, bool specials) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = std::ldexp(normal(rng), static_cast<int>(rng() % 12) - 6);
  if (specials) scatter_specials(x, rng, n / 997 + 1, 1e-30f, 3e4f);
  return x;
}

// How one scaling kind quantizes an operand stored [rows, cols] whose K runs along `axis`.
using Quantizer = std::function<sim::QuantizedTensor(const std::vector<float>&, std::int64_t,
                                                     std::int64_t, ScaleAxis, Format, bool weight)>;

struct ScalingKind {
  const char* name;
  Quantizer quantize;
};

const ScalingKind kScalingKinds[] = {
    {"per-tensor",
     [](const std::vector<float>& x, std::int64_t r, std::int64_t c, ScaleAxis, Format f, bool) {
       return sim::scaling::quantize_current_te(x, r, c, f).tensor;
     }},
    {"rowwise",
     [](const std::vector<float>& x, std::int64_t r, std::int64_t c, ScaleAxis axis, Format f,
        bool) { return sim::scaling::quantize_axiswise_torchao(x, r, c, axis, f, true).tensor; }},
    {"block 1x128/128x128",
     [](const std::vector<float>& x, std::int64_t r, std::int64_t c, ScaleAxis axis, Format f,
        bool weight) {
       sim::scaling::BlockScalingConfig config;
       config.block = weight ? sim::scaling::kBlock128x128
                             : (axis == ScaleAxis::kRowwise ? sim::scaling::kBlock1x128
                                                            : sim::scaling::kBlock128x1);
       return sim::scaling::quantize_block_te(x, r, c, f, config).tensor;
     }},
    {"mxfp8", [](const std::vector<float>& x, std::int64_t r, std::int64_t c, ScaleAxis axis,
                 Format f, bool) { return sim::scaling::quantize_mx(x, r, c, axis, f).tensor; }},
};

struct Layout {
  const char* name;
  bool a_k_is_cols, b_k_is_cols;
  bool b_is_weight;
};
// gemm.hpp: fprop A=X [M,K], B=W [N,K]; dgrad A=dY [M,K], B=W stored [K,N]; wgrad A=dY stored
// [K,M], B=X stored [K,N].
constexpr Layout kLayouts[] = {
    {"fprop", true, true, true}, {"dgrad", true, false, true}, {"wgrad", false, false, false}};

// A case's fp32 operands in their stored shapes (K along cols -> [outer, K], along rows ->
// [K, outer]) and its output options, all from its seed: bit 0 bf16 output, bit 1 a bias.
struct CaseInputs {
  CaseInputs(const Layout& layout, const GemmShape& s, std::uint64_t seed)
      : bf16((seed & 1) != 0),
        with_bias((seed & 2) != 0),
        ar(layout.a_k_is_cols ? s.m : s.k),
        ac(layout.a_k_is_cols ? s.k : s.m),
        br(layout.b_k_is_cols ? s.n : s.k),
        bc(layout.b_k_is_cols ? s.k : s.n),
        xa(operand_values(static_cast<std::size_t>(ar * ac), seed, true)),
        xb(operand_values(static_cast<std::size_t>(br * bc), seed + 1, s.k > 64)) {
    if (with_bias) bias = operand_values(static_cast<std::size_t>(s.n), seed + 2, false);
    where = std::string(layout.name) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
            std::to_string(s.k);
  }
  // The case's words for a failure: layout and shape, then what the caller adds, then options.
  std::string describe(const std::string& more) const {
    return where + more + (bf16 ? " bf16-out" : "") + (with_bias ? " bias" : "");
  }

  bool bf16, with_bias;
  std::int64_t ar, ac, br, bc;
  std::vector<float> xa, xb, bias;
  std::string where;
};

// The GPU side of a case, written once for both GEMM kinds: gopt with the case's output type and
// bias, run by host(gopt, out) on the host twin, or by device(gopt, out) with the bias and out in
// device memory, then synchronized and downloaded.
template <class GpuOptions, class Host, class Device>
std::vector<float> gpu_output(const CaseInputs& in, GpuOptions gopt, std::size_t size, bool on_host,
                              Host host, Device device) {
  gopt.bf16_output = in.bf16;
  if (on_host) {
    std::vector<float> out(size);
    gopt.bias = in.with_bias ? in.bias.data() : nullptr;
    host(gopt, out.data());
    return out;
  }
  gpu::DeviceBuffer<float> dbias(in.bias), dout(size);
  gopt.bias = in.with_bias ? dbias.get() : nullptr;
  device(gopt, dout.get());
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  return dout.download();
}

void run_case(CheckResult& result, sim::Accumulation model, const ScalingKind& kind,
              const Layout& layout, const GemmShape& s, std::uint64_t seed, bool on_host) {
  const CaseInputs in(layout, s, seed);
  const auto& [bf16, with_bias, ar, ac, br, bc, xa, xb, bias, where] = in;
  const Format b_format = (seed & 4) != 0 ? Format::E5M2 : Format::E4M3;
  const auto axis = [](bool k_is_cols) {
    return k_is_cols ? ScaleAxis::kRowwise : ScaleAxis::kColumnwise;
  };
  const sim::QuantizedTensor ta =
      kind.quantize(xa, ar, ac, axis(layout.a_k_is_cols), Format::E4M3, false);
  const sim::QuantizedTensor tb =
      kind.quantize(xb, br, bc, axis(layout.b_k_is_cols), b_format, layout.b_is_weight);

  sim::GemmOptions options;
  options.accumulation = model;
  options.output = bf16 ? sim::GemmOutputType::kBf16 : sim::GemmOutputType::kFp32;
  options.bias = bias;
  options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::vector<float> expected =
      sim::gemm({ta, layout.a_k_is_cols ? sim::ReduceDim::kCols : sim::ReduceDim::kRows},
                {tb, layout.b_k_is_cols ? sim::ReduceDim::kCols : sim::ReduceDim::kRows}, options);

  gpu::DeviceGemmOptions gopt;
  gopt.model = model;
  const auto host_operand = [](const sim::QuantizedTensor& t, bool k_is_cols) {
    return gpu::DeviceGemmOperand{t.data.data(), t.scale_inv.data(), t.rows,   t.cols,
                                  t.block_rows,  t.block_cols,       t.format, k_is_cols};
  };
  const std::vector<float> actual = gpu_output(
      in, gopt, expected.size(), on_host,
      [&](const gpu::DeviceGemmOptions& o, float* out) {
        gpu::host_twin::gemm(host_operand(ta, layout.a_k_is_cols),
                             host_operand(tb, layout.b_k_is_cols), o, out);
      },
      [&](const gpu::DeviceGemmOptions& o, float* out) {
        const DeviceTensor da(ta), db(tb);
        gpu::gemm(da.operand(layout.a_k_is_cols), db.operand(layout.b_k_is_cols), o, out);
      });
  ++result.cases;
  compare_matrix(result, in.describe(std::string(" B ") + sim::spec(b_format).name), expected,
                 actual.data(), s.n);
}

void run_dense_case(CheckResult& result, bool round_to_bf16, const Layout& layout,
                    const GemmShape& s, std::uint64_t seed, bool on_host) {
  const CaseInputs in(layout, s, seed);
  const auto& [bf16, with_bias, ar, ac, br, bc, xa, xb, bias, where] = in;
  sim::HighPrecisionGemmOptions options;
  options.round_operands_to_bf16 = round_to_bf16;
  options.output = bf16 ? sim::GemmOutputType::kBf16 : sim::GemmOutputType::kFp32;
  options.bias = bias;
  options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto dim = [](bool k_is_cols) {
    return k_is_cols ? sim::ReduceDim::kCols : sim::ReduceDim::kRows;
  };
  const std::vector<float> expected = sim::high_precision_gemm(
      {xa, ar, ac, dim(layout.a_k_is_cols)}, {xb, br, bc, dim(layout.b_k_is_cols)}, options);
  gpu::DenseGemmOptions gopt;
  gopt.round_operands_to_bf16 = round_to_bf16;
  const std::vector<float> actual = gpu_output(
      in, gopt, expected.size(), on_host,
      [&](const gpu::DenseGemmOptions& o, float* out) {
        gpu::host_twin::high_precision_gemm({xa.data(), ar, ac, layout.a_k_is_cols},
                                            {xb.data(), br, bc, layout.b_k_is_cols}, o, out);
      },
      [&](const gpu::DenseGemmOptions& o, float* out) {
        gpu::DeviceBuffer<float> da(xa), db(xb);
        gpu::high_precision_gemm({da.get(), ar, ac, layout.a_k_is_cols},
                                 {db.get(), br, bc, layout.b_k_is_cols}, o, out);
      });
  ++result.cases;
  compare_matrix(result, in.describe(""), expected, actual.data(), s.n);
}

}  // namespace

std::vector<CheckResult> check_gemm_models(bool on_host) {
  std::vector<CheckResult> results;
  for (const sim::Accumulation model :
       {sim::Accumulation::kFp32Seq, sim::Accumulation::kHopperSplitAccumulator,
        sim::Accumulation::kHopperFastAccum}) {
    for (const ScalingKind& kind : kScalingKinds) {
      CheckResult r;
      r.kernel = std::string(on_host ? "host twin gemm " : "gemm ") + sim::to_string(model) + " " +
                 kind.name;
      std::uint64_t seed = 1;
      for (const Layout& layout : kLayouts) {
        for (const GemmShape& s : kShapes) run_case(r, model, kind, layout, s, seed++, on_host);
      }
      results.push_back(std::move(r));
    }
  }
  for (const bool round_to_bf16 : {false, true}) {
    CheckResult r;
    r.kernel = std::string(on_host ? "host twin " : "") + "high_precision_gemm " +
               (round_to_bf16 ? "bf16 operands" : "fp32 operands");
    std::uint64_t seed = 1;
    for (const Layout& layout : kLayouts) {
      for (const GemmShape& s : kShapes)
        run_dense_case(r, round_to_bf16, layout, s, seed++, on_host);
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace fp8lab::experiments::gpu_check

#endif  // FP8LAB_HAVE_CUDA
