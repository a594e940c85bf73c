// gpu::scaling quantizers against sim::scaling (experiments/gpu_check/checks.hpp): codes, scales,
// scale_inv, E8M0 codes and statistics, bit for bit; and gpu::dequantize of each result against
// sim::scaling::dequantize (a NaN as any NaN).
// Needs CUDA: compiled to nothing in a build without gpu/ (fp8lab_gpu_check globs every .cpp in gpu_check/).
#if FP8LAB_HAVE_CUDA
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "experiments/gpu_check/check_inputs.hpp"
#include "experiments/gpu_check/checks.hpp"
#include "experiments/gpu_check/compare_stats.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/dequantize.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/scaling/blocked.hpp"
#include "sim/scaling/block.hpp"
#include "sim/scaling/current.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/rowwise.hpp"
#include "sim/scaling/stats.hpp"

namespace fp8lab::experiments::gpu_check {
namespace {

using sim::Format;

struct Shape {
  std::int64_t rows, cols;
};
// Odd sizes around 32- and 128-element blocks and the 8-warp grid; {3, 32} and {5, 384} end in a
// partial 512-value step of the row-block kernels (gpu/scaling/blocked.cu: 1x32, 1x128).
constexpr Shape kShapes[] = {{1, 1},     {7, 33},     {33, 130}, {128, 128},
                             {130, 257}, {256, 1000}, {3, 32},   {5, 384}};

// Three input families: clean activations over a few binades; the same with rare specials (NaN,
// ±Inf, zeros, fp32 denormals, huge values); and wide-range values (2^-40 .. 2^40).
std::vector<float> input(std::size_t n, std::uint64_t seed, int family) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) {
    v = family == 2 ? std::ldexp(normal(rng), static_cast<int>(rng() % 81) - 40)
                    : std::ldexp(normal(rng), static_cast<int>(rng() % 6) - 3);
  }
  if (family == 1) scatter_specials(x, rng, n / 301 + 1, 1e30f, -3e-30f);
  return x;
}

struct Quantizer {
  std::string name;
  std::function<sim::scaling::QuantizeResult(const std::vector<float>&, std::int64_t, std::int64_t,
                                             Format)>
      sim;
  // Runs the GPU quantizer (device pointers) or, with on_host, its host twin (host pointers).
  std::function<void(const float*, std::int64_t, std::int64_t, Format,
                     const gpu::scaling::BlockedOutputs&, bool on_host)>
      gpu;
};

std::vector<Quantizer> quantizers() {
  namespace ss = sim::scaling;
  namespace gs = gpu::scaling;
  std::vector<Quantizer> q;
  for (const bool pow2 : {false, true}) {
    q.push_back({std::string("current te") + (pow2 ? " pow2" : ""),
                 [pow2](const auto& x, auto r, auto c, Format f) {
                   return ss::quantize_current_te(x, r, c, f, pow2);
                 },
                 [pow2](const float* x, auto r, auto c, Format f, const auto& o, bool h) {
                   h ? gs::host_twin::quantize_current_te(x, r, c, f, pow2, 0.0f, o)
                     : gs::quantize_current_te(x, r, c, f, pow2, 0.0f, o);
                 }});
    q.push_back({std::string("tensorwise torchao") + (pow2 ? " pow2" : ""),
                 [pow2](const auto& x, auto r, auto c, Format f) {
                   return ss::quantize_tensorwise_torchao(x, r, c, f, pow2);
                 },
                 [pow2](const float* x, auto r, auto c, Format f, const auto& o, bool h) {
                   h ? gs::host_twin::quantize_tensorwise_torchao(x, r, c, f, pow2, o)
                     : gs::quantize_tensorwise_torchao(x, r, c, f, pow2, o);
                 }});
  }
  // Static scaling (QuantizeKind::kStatic): unit scale, a scale below 1, and one at which the
  // wide-range inputs saturate and most clean ones do not underflow.
  for (const float scale : {1.0f, 0.0625f, 1048576.0f}) {
    char name[48];
    std::snprintf(name, sizeof name, "static %g", static_cast<double>(scale));
    q.push_back({name,
                 [scale](const auto& x, auto r, auto c, Format f) {
                   return ss::quantize_per_tensor("static", x, r, c, f, scale);
                 },
                 [scale](const float* x, auto r, auto c, Format f, const auto& o, bool h) {
                   h ? gs::host_twin::quantize_static(x, r, c, f, scale, o)
                     : gs::quantize_static(x, r, c, f, scale, o);
                 }});
  }
  for (const bool rowwise : {true, false}) {
    q.push_back({std::string("axiswise torchao ") + (rowwise ? "rowwise" : "columnwise"),
                 [rowwise](const auto& x, auto r, auto c, Format f) {
                   return ss::quantize_axiswise_torchao(
                       x, r, c, rowwise ? ss::ScaleAxis::kRowwise : ss::ScaleAxis::kColumnwise, f,
                       true);
                 },
                 [rowwise](const float* x, auto r, auto c, Format f, const auto& o, bool h) {
                   h ? gs::host_twin::quantize_axiswise_torchao(x, r, c, rowwise, f, true, o)
                     : gs::quantize_axiswise_torchao(x, r, c, rowwise, f, true, o);
                 }});
  }
  for (const ss::BlockShape block : {ss::kBlock1x128, ss::kBlock128x1, ss::kBlock128x128}) {
    for (const bool pow2 : {true, false}) {
      const std::string name = "block te " + std::to_string(block.rows) + "x" +
                               std::to_string(block.cols) + (pow2 ? " pow2" : " fp32-scales");
      q.push_back({name,
                   [block, pow2](const auto& x, auto r, auto c, Format f) {
                     ss::BlockScalingConfig config;
                     config.block = block;
                     config.pow2 = pow2;
                     return ss::quantize_block_te(x, r, c, f, config);
                   },
                   [block, pow2](const float* x, auto r, auto c, Format f, const auto& o, bool h) {
                     const float inf_value = ss::block_value_for_inf(Format::FP32);
                     h ? gs::host_twin::quantize_block_te(x, r, c, block.rows, block.cols, f, pow2,
                                                          0.0f, inf_value, o)
                       : gs::quantize_block_te(x, r, c, block.rows, block.cols, f, pow2, 0.0f,
                                               inf_value, o);
                   }});
    }
  }
  const ss::E8M0Mode modes[] = {ss::E8M0Mode::kTe, ss::E8M0Mode::kFloor, ss::E8M0Mode::kCeil,
                                ss::E8M0Mode::kEven, ss::E8M0Mode::kRceil};
  for (const ss::E8M0Mode mode : modes) {
    for (const ss::TorchaoVersion v : {ss::TorchaoVersion::kV0_18, ss::TorchaoVersion::kMain}) {
      if (mode == ss::E8M0Mode::kTe && v == ss::TorchaoVersion::kMain) continue;  // no version
      const std::string name =
          std::string(ss::to_string(mode)) +
          (mode == ss::E8M0Mode::kTe ? "" : std::string(" ") + ss::to_string(v));
      for (const int shape : {0, 1, 2}) {  // 1x32 rowwise, 32x1 columnwise, 32x32 2-D
        const char* shape_name[] = {"1x32", "32x1", "32x32"};
        q.push_back(
            {std::string("mxfp8 ") + shape_name[shape] + " " + name,
             [mode, v, shape](const auto& x, auto r, auto c, Format f) {
               if (shape == 2) return ss::quantize_mx_2d(x, r, c, f, mode, v);
               return ss::quantize_mx(
                   x, r, c, shape == 0 ? ss::ScaleAxis::kRowwise : ss::ScaleAxis::kColumnwise, f,
                   mode, v);
             },
             [mode, v, shape](const float* x, auto r, auto c, Format f, const auto& o, bool h) {
               const std::int64_t br = shape == 0 ? 1 : 32, bc = shape == 1 ? 1 : 32;
               h ? gs::host_twin::quantize_mx(x, r, c, br, bc, f, mode, v, o)
                 : gs::quantize_mx(x, r, c, br, bc, f, mode, v, o);
             }});
      }
    }
  }
  return q;
}

// gpu::dequantize (gpu/dequantize.hpp) of sim's quantized tensor t against
// sim::scaling::dequantize(t): every value's bits, a NaN as any NaN (its bits are
// implementation-defined).
void check_dequantize(CheckResult& r, const std::string& where, const sim::QuantizedTensor& t,
                      bool on_host) {
  const std::vector<float> want = sim::scaling::dequantize(t);
  std::vector<float> got(want.size());
  gpu::DeviceGemmOperand view{t.data.data(), t.scale_inv.data(), t.rows,   t.cols,
                              t.block_rows,  t.block_cols,       t.format, true};
  if (on_host) {
    gpu::host_twin::dequantize(view, got.data());
  } else {
    gpu::DeviceBuffer<std::uint8_t> dcodes(t.data);
    gpu::DeviceBuffer<float> dscale_inv(t.scale_inv), dout(want.size());
    view.codes = dcodes.get();
    view.scale_inv = dscale_inv.get();
    gpu::dequantize(view, dout.get());
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    got = dout.download();
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) {
      ++r.compared;
      continue;
    }
    compare_float_at(
        r, [&] { return where + " dequantized[" + std::to_string(i) + "]"; }, want[i], got[i]);
  }
}

void run_case(CheckResult& r, const Quantizer& q, const std::vector<float>& x, Shape s,
              Format format, bool on_host) {
  const sim::scaling::QuantizeResult expected = q.sim(x, s.rows, s.cols, format);
  const sim::QuantizedTensor& t = expected.tensor;
  const std::size_t scales_n = t.scale_inv.size();
  std::vector<std::uint8_t> codes(x.size()), e8m0(scales_n);
  std::vector<float> scale_inv(scales_n), scale(scales_n);
  gpu::DeviceQuantizeStats st{};
  if (on_host) {
    q.gpu(x.data(), s.rows, s.cols, format,
          {codes.data(), scale_inv.data(), scale.data(), e8m0.data(), &st}, true);
  } else {
    gpu::DeviceBuffer<float> dx(x), dscale_inv(scales_n), dscale(scales_n);
    gpu::DeviceBuffer<std::uint8_t> dcodes(x.size()), de8m0(scales_n);
    gpu::DeviceBuffer<gpu::DeviceQuantizeStats> dstats(1);
    dstats.zero();
    q.gpu(dx.get(), s.rows, s.cols, format,
          {dcodes.get(), dscale_inv.get(), dscale.get(), de8m0.get(), dstats.get()}, false);
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    codes = dcodes.download();
    e8m0 = de8m0.download();
    scale_inv = dscale_inv.download();
    scale = dscale.download();
    st = gpu::read_stats(dstats.get());
  }
  ++r.cases;
  const std::string where = std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " +
                            sim::spec(format).name;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    ++r.compared;
    if (t.data[i] != 0) ++r.nonzero;
    if (codes[i] != t.data[i]) {
      char text[160];
      std::snprintf(text, sizeof text, " code[%zu]: x = %s, sim 0x%02X, gpu 0x%02X", i,
                    bits_text(x[i]).c_str(), t.data[i], codes[i]);
      r.add_mismatch(where + text,
                     static_cast<std::uint64_t>(std::abs(int{codes[i]} - int{t.data[i]})));
    }
  }
  for (std::size_t b = 0; b < t.scale_inv.size(); ++b) {
    compare_float(r, where + " scale_inv[" + std::to_string(b) + "]", t.scale_inv[b], scale_inv[b]);
    if (!t.scale.empty())
      compare_float(r, where + " scale[" + std::to_string(b) + "]", t.scale[b], scale[b]);
    if (!t.scale_e8m0.empty() && t.scale_e8m0[b] != e8m0[b]) {
      r.add_mismatch(where + " e8m0[" + std::to_string(b) + "]: sim " +
                         std::to_string(t.scale_e8m0[b]) + ", gpu " + std::to_string(e8m0[b]),
                     static_cast<std::uint64_t>(std::abs(int{t.scale_e8m0[b]} - int{e8m0[b]})));
    }
  }
  compare_stats(r, where, expected.stats, st);
  check_dequantize(r, where, t, on_host);
}

}  // namespace

std::vector<CheckResult> check_scaling_quantizers(bool on_host) {
  std::vector<CheckResult> results;
  for (const Quantizer& q : quantizers()) {
    CheckResult r;
    r.kernel = std::string(on_host ? "host twin " : "") + "scaling " + q.name;
    std::uint64_t seed = 100;
    for (const Shape& s : kShapes) {
      for (const int family : {0, 1, 2}) {
        const std::vector<float> x =
            input(static_cast<std::size_t>(s.rows * s.cols), seed++, family);
        for (const Format format : {Format::E4M3, Format::E5M2})
          run_case(r, q, x, s, format, on_host);
      }
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace fp8lab::experiments::gpu_check

#endif  // FP8LAB_HAVE_CUDA
