// The FP4/FP6 quantizers and the RHT of gpu/scaling/fp4.hpp against sim/ (checks.hpp): every code,
// scale byte, multiplier, dequantization factor and NVFP4 global value, and every RHT output, bit
// for bit. A NaN float compares equal to a NaN (x86 and the GPU make different NaN bit patterns
// for 0/0 and NaN arithmetic, and nothing stores those floats: the stored bytes, codes and scale
// bytes, are compared exactly).
// Needs CUDA: compiled to nothing in a build without gpu/ (fp8lab_gpu_check globs every .cpp in gpu_check/).
#if FP8LAB_HAVE_CUDA
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>

#include "experiments/gpu_check/check_inputs.hpp"
#include "experiments/gpu_check/checks.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/scaling/fp4.hpp"
#include "gpu/scaling/fp4_stochastic.hpp"
#include "sim/cast.hpp"
#include "sim/rht.hpp"
#include "sim/scaling/mx.hpp"
#include "sim/scaling/nvfp4.hpp"

namespace fp8lab::experiments::gpu_check {
namespace {

using sim::Format;
namespace ss = sim::scaling;
namespace gs = gpu::scaling;

struct Shape {
  std::int64_t rows, cols;
};
// Whole blocks, partial edge blocks (33 x 130) and a single row.
constexpr Shape kShapes[] = {{16, 64}, {33, 130}, {64, 256}, {1, 48}, {96, 96}};

// Three families: Gaussians over a few binades; per-block magnitudes over 2^-60..2^60 with tiny
// and zero blocks beside huge ones (NVFP4's subnormal and zero E4M3 scales, torchao's 2^-6 floor);
// and the second with NaN, ±Inf, ±0 and denormals scattered in.
std::vector<float> input(const Shape& s, std::uint64_t seed, int family) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(s.rows * s.cols));
  for (std::int64_t r = 0; r < s.rows; ++r) {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const int binade = family == 0 ? static_cast<int>(rng() % 6) - 3
                                     : static_cast<int>(((r / 4) * 7 + (c / 16) * 13) % 121) - 60;
      float v = std::ldexp(normal(rng), binade);
      if (family > 0 && (r + c / 16) % 11 == 3) v = 0.0f;
      x[static_cast<std::size_t>(r * s.cols + c)] = v;
    }
  }
  if (family == 2) scatter_specials(x, rng, x.size() / 97 + 1, 1e30f, -3e-30f);
  return x;
}

// A tensor of amax 1 (S_enc = 2688 in TE's mode) whose 16-element row blocks each hold, as their
// max, a value v for which TE's order of the scale chain, v * RN(S_enc * RN(1/6)), and the other
// one, RN(v / 6) * S_enc, round to different E4M3 codes: one such v in a few hundred, which the
// other families would rarely meet.
std::vector<float> scale_order_blocks(const Shape& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const float encode = 2688.0f, sixth = 1.0f / 6.0f;
  std::vector<float> x(static_cast<std::size_t>(s.rows * s.cols));
  for (std::size_t i = 0; i < x.size(); i += 16) {
    float v = 0.0f;
    for (int tries = 0; tries < 100000; ++tries) {
      v = std::ldexp(0.5f + 0.5f * unit(rng), -static_cast<int>(rng() % 12));
      const auto te =
          sim::cast_fp32_to_fp8(v * (encode * sixth), Format::E4M3, sim::Overflow::kSatFinite);
      const auto other =
          sim::cast_fp32_to_fp8((v / 6.0f) * encode, Format::E4M3, sim::Overflow::kSatFinite);
      if (te != other) break;
    }
    for (std::size_t j = i; j < i + 16 && j < x.size(); ++j) {
      x[j] = j == i ? v : v * unit(rng) * ((rng() & 1) != 0 ? 1.0f : -1.0f);
    }
  }
  x[0] = 1.0f;
  return x;
}

bool same_float(float a, float b) {
  return std::isnan(a) ? std::isnan(b)
                       : std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

void compare_bytes(CheckResult& r, const std::string& where, const char* what,
                   const std::vector<std::uint8_t>& expected,
                   const std::vector<std::uint8_t>& actual, const std::vector<float>* x = nullptr) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ++r.compared;
    if (expected[i] != 0) ++r.nonzero;
    if (expected[i] != actual[i]) {
      char text[200];
      std::snprintf(text, sizeof text, " %s[%zu]%s%s: sim 0x%02X, gpu 0x%02X", what, i,
                    x != nullptr ? ", x = " : "", x != nullptr ? bits_text((*x)[i]).c_str() : "",
                    expected[i], actual[i]);
      r.add_mismatch(where + text,
                     static_cast<std::uint64_t>(std::abs(int{expected[i]} - int{actual[i]})));
    }
  }
}

void compare_floats(CheckResult& r, const std::string& where, const char* what,
                    const std::vector<float>& expected, const std::vector<float>& actual) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ++r.compared;
    if (expected[i] != 0.0f) ++r.nonzero;
    if (!same_float(expected[i], actual[i])) {
      r.add_mismatch(where + " " + what + "[" + std::to_string(i) + "]: sim " +
                         bits_text(expected[i]) + ", gpu " + bits_text(actual[i]),
                     ulp_distance(expected[i], actual[i]));
    }
  }
}

// The gpu side's outputs, on the host.
struct Outputs {
  std::vector<std::uint8_t> codes, scale_bytes;
  std::vector<float> scale, scale_inv, global;
};

// Runs `run` (device or host twin) into Outputs sized like sim's tensor `t`.
Outputs run_quantizer(const std::vector<float>& x, const sim::QuantizedTensor& t, bool nvfp4,
                      bool on_host,
                      const std::function<void(const float*, const gs::Fp4Outputs&)>& run) {
  const std::size_t blocks = t.scale_inv.size();
  Outputs o{std::vector<std::uint8_t>(x.size()), std::vector<std::uint8_t>(blocks),
            std::vector<float>(blocks), std::vector<float>(blocks),
            std::vector<float>(nvfp4 ? 3 : 0)};
  if (on_host) {
    run(x.data(), {o.codes.data(), o.scale_bytes.data(), o.scale.data(), o.scale_inv.data(),
                   nvfp4 ? o.global.data() : nullptr});
    return o;
  }
  gpu::DeviceBuffer<float> dx(x), dscale(blocks), dinv(blocks), dglobal(3);
  gpu::DeviceBuffer<std::uint8_t> dcodes(x.size()), dbytes(blocks);
  run(dx.get(),
      {dcodes.get(), dbytes.get(), dscale.get(), dinv.get(), nvfp4 ? dglobal.get() : nullptr});
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  o.codes = dcodes.download();
  o.scale_bytes = dbytes.download();
  o.scale = dscale.download();
  o.scale_inv = dinv.download();
  if (nvfp4) o.global = dglobal.download();
  return o;
}

void compare_quantized(CheckResult& r, const std::string& where, const std::vector<float>& x,
                       const sim::QuantizedTensor& t, const Outputs& o, bool nvfp4) {
  ++r.cases;
  compare_bytes(r, where, "code", t.data, o.codes, &x);
  compare_bytes(r, where, "scale byte", nvfp4 ? t.scale_e4m3 : t.scale_e8m0, o.scale_bytes);
  compare_floats(r, where, "scale", t.scale, o.scale);
  compare_floats(r, where, "scale_inv", t.scale_inv, o.scale_inv);
  if (nvfp4) compare_floats(r, where, "global", t.global_scale, o.global);
}

const char* shape_name(std::int64_t br, std::int64_t bc) {
  if (br == 1) return bc == 16 ? "1x16" : "1x32";
  if (bc == 1) return br == 16 ? "16x1" : "32x1";
  return br == 16 ? "16x16" : "32x32";
}

}  // namespace

std::vector<CheckResult> check_fp4_kernels(bool on_host) {
  std::vector<CheckResult> results;
  const std::string prefix = on_host ? "host twin " : "";
  // MXFP4 / MXFP6: every element format, E8M0 mode and torchao version, 1x32, 32x1, 32x32.
  for (const Format f : {Format::E2M1, Format::E2M3, Format::E3M2}) {
    for (const ss::E8M0Mode mode : {ss::E8M0Mode::kTe, ss::E8M0Mode::kFloor, ss::E8M0Mode::kCeil,
                                    ss::E8M0Mode::kEven, ss::E8M0Mode::kRceil}) {
      for (const ss::TorchaoVersion v : {ss::TorchaoVersion::kV0_18, ss::TorchaoVersion::kMain}) {
        if (mode == ss::E8M0Mode::kTe && v == ss::TorchaoVersion::kMain) continue;
        CheckResult r;
        r.kernel = prefix + "mx " + sim::spec(f).name + " " + ss::to_string(mode) +
                   (mode == ss::E8M0Mode::kTe ? "" : std::string(" ") + ss::to_string(v));
        std::uint64_t seed = 500;
        for (const Shape& s : kShapes) {
          for (const int family : {0, 1, 2}) {
            const std::vector<float> x = input(s, seed++, family);
            for (const int shape : {0, 1, 2}) {
              const std::int64_t br = shape == 0 ? 1 : 32, bc = shape == 1 ? 1 : 32;
              const ss::QuantizeResult want =
                  shape == 2 ? ss::quantize_mx_2d(x, s.rows, s.cols, f, mode, v)
                             : ss::quantize_mx(x, s.rows, s.cols,
                                               shape == 0 ? ss::ScaleAxis::kRowwise
                                                          : ss::ScaleAxis::kColumnwise,
                                               f, mode, v);
              const Outputs got = run_quantizer(
                  x, want.tensor, false, on_host, [&](const float* dx, const gs::Fp4Outputs& o) {
                    on_host ? gs::host_twin::quantize_mx_subbyte(dx, s.rows, s.cols, br, bc, f,
                                                                 mode, v, o)
                            : gs::quantize_mx_subbyte(dx, s.rows, s.cols, br, bc, f, mode, v, o);
                  });
              compare_quantized(r,
                                std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " +
                                    shape_name(br, bc) + " family " + std::to_string(family),
                                x, want.tensor, got, false);
            }
          }
        }
        results.push_back(std::move(r));
      }
    }
  }
  // NVFP4: both modes, 1x16, 16x1, 16x16, the special tensors of fp4-formats.md §3b and blocks
  // where the order of TE's scale chain decides the E4M3 code.
  for (const ss::Nvfp4Mode mode : {ss::Nvfp4Mode::kTe, ss::Nvfp4Mode::kTorchao}) {
    for (const ss::BlockShape block :
         {ss::BlockShape{1, 16}, ss::BlockShape{16, 1}, ss::BlockShape{16, 16}}) {
      CheckResult r;
      r.kernel = prefix + "nvfp4 " + (mode == ss::Nvfp4Mode::kTe ? "te " : "torchao ") +
                 shape_name(block.rows, block.cols);
      std::uint64_t seed = 900;
      for (const Shape& s : kShapes) {
        for (const int family : {0, 1, 2, 3, 4, 5}) {
          std::vector<float> x = family == 5 ? scale_order_blocks(s, seed++)
                                             : input(s, seed++, family > 2 ? 0 : family);
          if (family == 3) x.assign(x.size(), 0.0f);    // all zero: TE 0x00 scales, torchao NaN
          if (family == 4) x[x.size() / 3] = INFINITY;  // one Inf: S_enc = 1 (TE), pts = Inf
          const ss::QuantizeResult want = ss::quantize_nvfp4(x, s.rows, s.cols, block, mode);
          const Outputs got = run_quantizer(
              x, want.tensor, true, on_host, [&](const float* dx, const gs::Fp4Outputs& o) {
                on_host ? gs::host_twin::quantize_nvfp4(dx, s.rows, s.cols, block.rows, block.cols,
                                                        mode, o)
                        : gs::quantize_nvfp4(dx, s.rows, s.cols, block.rows, block.cols, mode, o);
              });
          compare_quantized(r,
                            std::to_string(s.rows) + "x" + std::to_string(s.cols) + " family " +
                                std::to_string(family),
                            x, want.tensor, got, true);
        }
      }
      results.push_back(std::move(r));
    }
  }
  // NVFP4 te with stochastic rounding of the codes (gpu/scaling/fp4_stochastic.hpp), 1x16, 16x1,
  // 16x16: Gaussian, wide-range, special-value and one-Inf tensors, each under three Philox seeds
  // (two streams), so that every code is drawn with bits sim draws for the same element.
  for (const ss::BlockShape block :
       {ss::BlockShape{1, 16}, ss::BlockShape{16, 1}, ss::BlockShape{16, 16}}) {
    CheckResult r;
    r.kernel = prefix + "nvfp4 te sr " + shape_name(block.rows, block.cols);
    std::uint64_t seed = 1100;
    for (const Shape& s : kShapes) {
      for (const int family : {0, 1, 2, 4}) {
        std::vector<float> x = input(s, seed++, family > 2 ? 0 : family);
        if (family == 4) x[x.size() / 3] = INFINITY;
        for (const ss::StochasticStream sr :
             {ss::StochasticStream{0, 0}, ss::StochasticStream{42, 7},
              ss::StochasticStream{0x9E37'79B9'7F4A'7C15u, 3}}) {
          const ss::QuantizeResult want =
              ss::quantize_nvfp4(x, s.rows, s.cols, block, ss::Nvfp4Mode::kTe, &sr);
          const Outputs got = run_quantizer(
              x, want.tensor, true, on_host, [&](const float* dx, const gs::Fp4Outputs& o) {
                on_host ? gs::host_twin::quantize_nvfp4_stochastic(
                              dx, s.rows, s.cols, block.rows, block.cols, sr.seed, sr.stream, o)
                        : gs::quantize_nvfp4_stochastic(dx, s.rows, s.cols, block.rows, block.cols,
                                                        sr.seed, sr.stream, o);
              });
          compare_quantized(r,
                            std::to_string(s.rows) + "x" + std::to_string(s.cols) + " family " +
                                std::to_string(family) + " seed " + std::to_string(sr.seed),
                            x, want.tensor, got, true);
        }
      }
    }
    results.push_back(std::move(r));
  }
  // The RHT, chunks down the rows (TE's use) and along them, TE's sign vector and another.
  for (const bool down : {true, false}) {
    CheckResult r;
    r.kernel = prefix + std::string("rht bf16 ") + (down ? "down rows" : "along rows");
    std::uint64_t seed = 1300;
    for (const Shape& s : {Shape{16, 16}, Shape{64, 48}, Shape{256, 128}}) {
      for (const int family : {0, 1, 2}) {
        for (const std::uint16_t mask : {sim::kTeRhtSignMask, std::uint16_t{0x1234}}) {
          const std::vector<float> x = input(s, seed++, family);
          std::vector<float> want(x.size()), got(x.size());
          sim::random_hadamard_transform_bf16(
              x, s.rows, s.cols, down ? sim::RhtAxis::kRows : sim::RhtAxis::kCols, mask, want);
          if (on_host) {
            gpu::host_twin::random_hadamard_transform_bf16(x.data(), s.rows, s.cols, down, mask,
                                                           got.data());
          } else {
            gpu::DeviceBuffer<float> dx(x), dy(x.size());
            gpu::random_hadamard_transform_bf16(dx.get(), s.rows, s.cols, down, mask, dy.get());
            FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
            got = dy.download();
          }
          ++r.cases;
          compare_floats(r,
                         std::to_string(s.rows) + "x" + std::to_string(s.cols) + " family " +
                             std::to_string(family),
                         "y", want, got);
        }
      }
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace fp8lab::experiments::gpu_check

#endif  // FP8LAB_HAVE_CUDA
