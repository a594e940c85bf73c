// Optimizer-state precision (sim/optim/): every option's stored states after k steps, bit for
// bit, against a reference written here from the paper's code (FP8-LM: Azure/MS-AMP
// msamp/optim/adamw.py + adamw.cu + ScalingMeta.compute_scaling_factor; COAT: NVlabs/COAT
// fp8_adamw_cuda_kernel.cu and fp8_adamw_expand_cuda_kernel.cu), element by element as the
// kernels' threads do it, with libm's log2/pow where the kernels call them; and hand-worked
// cases of each rule.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/cast.hpp"
#include "sim/optim/adamw.hpp"
#include "sim/optim/exact_power.hpp"
#include "sim/optim/state_quantization.hpp"
#include "sim/rng.hpp"

namespace fp8lab::testing {
namespace {

using namespace sim::optim;
using sim::Format;
using sim::Overflow;

constexpr int kSteps = 6;

std::vector<float> normal(std::size_t n, float sigma, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> x(n);
  for (auto& v : x) v = d(gen);
  return x;
}

// The kernels' step: moments from the decoded states, the update from the new moments.
struct Moments {
  std::vector<float> m, v;
};
Moments new_moments(const AdamWHyper& h, const std::vector<float>& m_old,
                    const std::vector<float>& v_old, const std::vector<float>& g) {
  Moments out{m_old, v_old};
  for (std::size_t i = 0; i < g.size(); ++i) {
    out.m[i] = h.beta1 * m_old[i] + (1.f - h.beta1) * g[i];
    out.v[i] = h.beta2 * v_old[i] + (1.f - h.beta2) * (g[i] * g[i]);
  }
  return out;
}
void update_weights(const AdamWHyper& h, const Moments& mv, std::vector<float>& w) {
  const auto bc1 = static_cast<float>(1.0 - std::pow(static_cast<double>(h.beta1), h.step));
  const auto bc2 = static_cast<float>(1.0 - std::pow(static_cast<double>(h.beta2), h.step));
  const float step_size = h.lr / bc1, sqrt_bc2 = std::sqrt(bc2);
  const auto decay = static_cast<float>(1.0 - static_cast<double>(h.lr) * h.weight_decay);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = w[i] * decay;
    w[i] -= step_size * (mv.m[i] / (std::sqrt(mv.v[i]) / sqrt_bc2 + h.eps));
  }
}

// --- FP8-LM (MS-AMP LBAdamW, tensor_scale=True) -----------------------------------------------
struct Fp8lmState {
  std::vector<std::uint32_t> m_codes, v_codes;
  float m_scale = 1.0f, v_scale = 1.0f;  // ScalingMeta's scale starts at ones
};
float fp8lm_decode(std::uint32_t code, StateFormat f) {
  switch (f) {
    case StateFormat::kE4M3: return sim::decode_fp8(static_cast<std::uint8_t>(code), Format::E4M3);
    case StateFormat::kE5M2: return sim::decode_fp8(static_cast<std::uint8_t>(code), Format::E5M2);
    default: return sim::fp16_to_fp32(static_cast<std::uint16_t>(code));
  }
}
std::uint32_t fp8lm_cast(float x, StateFormat f) {  // cast_dtype<T>: __nv_fp8 / __half, RN
  switch (f) {
    case StateFormat::kE4M3: return sim::cast_fp32_to_fp8(x, Format::E4M3, Overflow::kSatFinite);
    case StateFormat::kE5M2: return sim::cast_fp32_to_fp8(x, Format::E5M2, Overflow::kSatFinite);
    default: return sim::fp32_to_fp16(x);
  }
}
// compute_scaling_factor(amax, scale, fp_max, margin=0)
float fp8lm_scale(float amax, float previous, float fp_max) {
  const double exp = std::floor(std::log2(static_cast<double>(fp_max / amax)));
  auto sf = static_cast<float>(std::round(std::pow(2.0, std::fabs(exp))));
  if (!(amax > 0.0f) || !std::isfinite(amax))
    sf = previous;
  else if (exp < 0)
    sf = 1.0f / sf;
  return sf;
}
void fp8lm_step(const AdamWHyper& h, StateFormat mf, StateFormat vf, Fp8lmState& s,
                std::vector<float>& w, const std::vector<float>& g) {
  const std::size_t n = g.size();
  const float m_inv = 1.0f / s.m_scale, v_inv = 1.0f / s.v_scale;
  std::vector<float> m_old(n), v_old(n);
  for (std::size_t i = 0; i < n; ++i) {
    m_old[i] = fp8lm_decode(s.m_codes[i], mf) * m_inv;
    v_old[i] = fp8lm_decode(s.v_codes[i], vf) * v_inv;
  }
  const auto mv = new_moments(h, m_old, v_old, g);
  update_weights(h, mv, w);  // stage 1
  float m_amax = 0, v_amax = 0;
  for (std::size_t i = 0; i < n; ++i) {
    m_amax = std::fmax(std::fabs(mv.m[i]), m_amax);
    v_amax = std::fmax(std::fabs(mv.v[i]), v_amax);
  }
  s.m_scale = fp8lm_scale(m_amax, s.m_scale, state_format_max(mf));
  s.v_scale = fp8lm_scale(v_amax, s.v_scale, state_format_max(vf));
  for (std::size_t i = 0; i < n; ++i) {  // stage 2
    s.m_codes[i] = fp8lm_cast(mv.m[i] * s.m_scale, mf);
    s.v_codes[i] = fp8lm_cast(mv.v[i] * s.v_scale, vf);
  }
}

// --- COAT (qgroup_size 128 in the kernels; any group size here) -------------------------------
struct CoatGroups {
  std::vector<std::uint32_t> codes;
  std::vector<float> scale, expand, center;
};
CoatGroups coat_initial(std::size_t n, std::size_t group, bool expand) {
  const std::size_t groups = (n + group - 1) / group;
  CoatGroups c{std::vector<std::uint32_t>(n, 0u), std::vector<float>(groups, 0.0f), {}, {}};
  if (expand) {
    c.expand.assign(groups, 1.0f);
    c.center.assign(groups, 1.0f);
  }
  return c;
}
float powf_libm(float x, float k) {
  return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(k)));
}
float e4m3(std::uint32_t code) {
  return sim::decode_fp8(static_cast<std::uint8_t>(code), Format::E4M3);
}
// signbit on the kernel's GPU, whose only fp32 NaN is 0x7fffffff (x86's 0 x inf is 0xffc00000).
bool gpu_signbit(float x) { return std::signbit(x) && !std::isnan(x); }
// The kernel's two lines: exp_avg with its sign, exp_avg_sq without (second).
float coat_decode(const CoatGroups& c, std::size_t i, std::size_t group, bool second) {
  const std::size_t b = i / group;
  const float v = e4m3(c.codes[i]) * c.scale[b];
  if (c.expand.empty()) return v;
  if (second) return powf_libm(v, 1 / c.expand[b]) * c.center[b];  // 1 / k in fp32
  const int sign = 1 - 2 * static_cast<int>(gpu_signbit(v));
  return static_cast<float>(sign) * powf_libm(std::fabs(v), 1 / c.expand[b]) * c.center[b];
}
void coat_quantize(const std::vector<float>& x, std::size_t group, int expand_min, CoatGroups& c) {
  const float fp8_max = 448;
  for (std::size_t b = 0; b * group < x.size(); ++b) {
    const std::size_t lo = b * group, hi = std::min(x.size(), lo + group);
    float max_val = 0, min_val = 3.4e38f;
    for (std::size_t i = lo; i < hi; ++i) {
      max_val = std::fmax(max_val, std::fabs(x[i]));
      if (std::fabs(x[i]) > 0) min_val = std::fmin(min_val, std::fabs(x[i]));
    }
    if (min_val == 3.4e38f) min_val = 0;
    if (c.expand.empty()) {  // fp8_adamw_cuda_kernel
      const float scale = (max_val + 1e-30f) / fp8_max;
      c.scale[b] = scale;
      for (std::size_t i = lo; i < hi; ++i) {
        c.codes[i] = sim::cast_fp32_to_fp8(x[i] / scale, Format::E4M3, Overflow::kSatFinite);
      }
      continue;
    }
    max_val += 1e-30f;  // fp8_adamw_expand_cuda_kernel
    min_val += 1e-30f;
    const float ratio = max_val / min_val;
    const float sqrt_min_max = std::sqrt(max_val) * std::sqrt(min_val);
    const float upper = fp8_max * fp8_max / 2;
    const float k = std::floor((static_cast<float>(std::log2(static_cast<double>(upper))) /
                                static_cast<float>(std::log2(static_cast<double>(ratio)))) *
                               static_cast<float>(expand_min)) /
                    static_cast<float>(expand_min);
    const float scale = powf_libm(max_val / sqrt_min_max, k) / fp8_max;
    for (std::size_t i = lo; i < hi; ++i) {
      const int sign = 1 - 2 * static_cast<int>(std::signbit(x[i]));
      const float y = static_cast<float>(sign) * powf_libm(std::fabs(x[i]) / sqrt_min_max, k);
      c.codes[i] = sim::cast_fp32_to_fp8(y / scale, Format::E4M3, Overflow::kSatFinite);
    }
    c.scale[b] = scale;
    c.expand[b] = k;
    c.center[b] = sqrt_min_max;
  }
}

AdamWHyper hyper_at(std::int64_t step) {
  AdamWHyper h{.lr = 3e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};
  h.step = step;
  return h;
}

// Gradients of a few magnitudes, with exact zeros (a group of them whole) and one outlier.
std::vector<float> gradient(std::size_t n, int step) {
  auto g = normal(n, 1e-3f, 100u + static_cast<std::uint32_t>(step));
  for (std::size_t i = 0; i < 128 && i < n; ++i) g[i] = 0.0f;
  if (n > 300) g[300] = 0.5f;
  for (std::size_t i = 0; i < n; i += 7) g[i] *= 1e-3f;
  return g;
}

std::vector<std::uint32_t> bits(const std::vector<float>& x) {
  std::vector<std::uint32_t> out;
  for (const float v : x) out.push_back(std::bit_cast<std::uint32_t>(v));
  return out;
}

TEST_CASE("FP8-LM's states (per-tensor power-of-two scale) equal MS-AMP's rule after k steps") {
  const std::size_t n = 1000;
  for (const auto& [mf, vf] : {std::pair{StateFormat::kE4M3, StateFormat::kFp16},
                               std::pair{StateFormat::kE5M2, StateFormat::kFp16},
                               std::pair{StateFormat::kE4M3, StateFormat::kE4M3}}) {
    OptimizerPrecision p;
    p.m.format = mf;
    p.v.format = vf;
    auto state = initial_moments(n, p);
    Fp8lmState ref{std::vector<std::uint32_t>(n, 0u), std::vector<std::uint32_t>(n, 0u)};
    auto w = normal(n, 0.02f, 7), w_ref = w;
    for (int step = 1; step <= kSteps; ++step) {
      const auto g = gradient(n, step);
      adamw_step(hyper_at(step), p, w, g, state, 0, 0);
      fp8lm_step(hyper_at(step), mf, vf, ref, w_ref, g);
      INFO("m " << static_cast<int>(mf) << " v " << static_cast<int>(vf) << " step " << step);
      REQUIRE(state.m.codes == ref.m_codes);
      REQUIRE(state.v.codes == ref.v_codes);
      REQUIRE(state.m.scales == std::vector<float>{ref.m_scale});
      REQUIRE(state.v.scales == std::vector<float>{ref.v_scale});
      REQUIRE(bits(w) == bits(w_ref));
    }
    // The scale moved off its initial 1: the rule was exercised.
    CHECK(state.m.scales[0] > 1.0f);
  }
}

TEST_CASE("FP8-LM's scale: 2^floor(log2(fmax / amax)), kept at amax 0") {
  StateQuantization q{StateFormat::kE4M3};
  auto s = initial_state(3, q);
  std::vector<float> x{3.0f, -1.0f, 0.5f};
  encode_state(x, q, s);
  CHECK(s.scales[0] == 128.0f);  // 448 / 3 = 149.3 -> 2^7
  CHECK(s.codes[0] == sim::cast_fp32_to_fp8(384.0f, Format::E4M3, Overflow::kSatFinite));
  x = {0.0f, 0.0f, 0.0f};
  encode_state(x, q, s);
  CHECK(s.scales[0] == 128.0f);
  x = {1000.0f, 0.0f, 0.0f};  // 448 / 1000 -> 2^-2
  encode_state(x, q, s);
  CHECK(s.scales[0] == 0.25f);
  std::vector<float> out(3);
  decode_state(s, q, out);
  CHECK(out[0] == 1024.0f);  // 250 -> 256 in e4m3, times 4
}

TEST_CASE("COAT's per-group states, with and without dynamic range expansion, after k steps") {
  const std::size_t n = 1000;  // 7 full groups of 128 and a short one
  for (const bool expand : {false, true}) {
    OptimizerPrecision p;
    p.m = {StateFormat::kE4M3, StateScaling::kPerBlock, 128,
           expand ? Expansion::kCoat : Expansion::kNone, 16};
    p.v = p.m;
    auto state = initial_moments(n, p);
    auto m_ref = coat_initial(n, 128, expand), v_ref = coat_initial(n, 128, expand);
    auto w = normal(n, 0.02f, 9), w_ref = w;
    // 40 steps: the all-zero group's moments sit near 1e-30, where the k = inf groups' scale is
    // 0, 1 / 448 or inf by turns (the L6 row's divergence came from there).
    for (int step = 1; step <= 40; ++step) {
      const auto g = gradient(n, step);
      adamw_step(hyper_at(step), p, w, g, state, 0, 0);
      std::vector<float> m_old(n), v_old(n);
      for (std::size_t i = 0; i < n; ++i) {
        m_old[i] = coat_decode(m_ref, i, 128, false);
        v_old[i] = coat_decode(v_ref, i, 128, true);
      }
      const auto mv = new_moments(hyper_at(step), m_old, v_old, g);
      update_weights(hyper_at(step), mv, w_ref);
      coat_quantize(mv.m, 128, 16, m_ref);
      coat_quantize(mv.v, 128, 16, v_ref);
      INFO("expansion " << expand << " step " << step);
      REQUIRE(state.m.codes == m_ref.codes);
      REQUIRE(state.v.codes == v_ref.codes);
      REQUIRE(bits(state.m.scales) == bits(m_ref.scale));
      REQUIRE(bits(state.v.scales) == bits(v_ref.scale));
      REQUIRE(bits(state.m.exponents) == bits(m_ref.expand));
      REQUIRE(bits(state.v.centers) == bits(v_ref.center));
      REQUIRE(bits(w) == bits(w_ref));
    }
    if (expand) {
      // Groups with a wide range are compressed (k < 1), narrow ones expanded (k > 1); the
      // all-zero group has ratio 1, so k = inf as in the kernel.
      CHECK(*std::min_element(state.v.exponents.begin(), state.v.exponents.end()) < 1.0f);
      CHECK(*std::max_element(state.m.exponents.begin() + 1, state.m.exponents.end()) > 1.0f);
      CHECK(std::isinf(state.m.exponents[0]));
    }
  }
}

TEST_CASE("COAT's expansion on a hand-worked group") {
  // |x| from 1 to 4: max/min = 4 (+1e-30 is lost), center 2, k = floor(log2(100352) / 2 * 16) / 16
  // = floor(132.9) / 16 = 8.25; scale = 2^8.25 / 448; x = 4 -> y = 2^8.25 -> code 448;
  // x = 2 -> y = 1 -> 448 / 2^8.25 = 1.47 -> 1.5; x = 1 -> y = 2^-8.25 -> 448 2^-16.5 = 2.47 2^-9
  // -> the subnormal 2^-8, which decodes to (2^-8 2^8.25 / 448)^(1 / 8.25) 2 = 0.9745.
  StateQuantization q{StateFormat::kE4M3, StateScaling::kPerBlock, 4, Expansion::kCoat, 16};
  auto s = initial_state(4, q);
  const std::vector<float> x{1.0f, -4.0f, 2.0f, 0.0f};
  encode_state(x, q, s);
  CHECK(s.exponents[0] == 8.25f);
  CHECK(s.centers[0] == 2.0f);
  CHECK(s.scales[0] == Approx(std::pow(2.0, 8.25) / 448).epsilon(1e-7));
  const auto value = [&](int i) {
    return sim::decode_fp8(static_cast<std::uint8_t>(s.codes[static_cast<std::size_t>(i)]),
                           Format::E4M3);
  };
  CHECK(value(1) == -448.0f);
  CHECK(value(2) == 1.5f);
  CHECK(value(0) == 0x1p-8f);
  CHECK(value(3) == 0.0f);
  std::vector<float> out(4);
  decode_state(s, q, out);
  CHECK(out[1] == Approx(-4.0f).epsilon(1e-6));
  CHECK(out[2] == Approx(2.0 * std::pow(1.5 * std::pow(2.0, 8.25) / 448, 1 / 8.25)).epsilon(1e-6));
  CHECK(out[0] == Approx(0.9745).epsilon(1e-4));
  CHECK(out[3] == 0.0f);
}

TEST_CASE("COAT's expansion on groups of equal values and of zeros (ratio 1, k = inf)") {
  // The kernel divides by log2(1) = 0: k = inf, 1 / k = 0, and every element decodes to
  // sign(v) powf(|v|, 0) center = +-center, v = code scale. Whether scale = (max / center)^inf /
  // 448 is 1 / 448, inf or 0 depends on how sqrt(max) sqrt(min) rounds; with inf or 0 the code
  // is 0 x inf, inf / inf or 0 / 0, a NaN, which on the kernel's GPU is positive (0x7fffffff).
  StateQuantization q{StateFormat::kE4M3, StateScaling::kPerBlock, 4, Expansion::kCoat, 16};
  const auto decoded = [&](float x) {
    auto s = initial_state(4, q);
    encode_state(std::vector<float>(4, x), q, s);
    CHECK(std::isinf(s.exponents[0]));
    std::vector<float> out(4);
    decode_state(s, q, out);
    for (const float v : out) CHECK(std::bit_cast<std::uint32_t>(v) == bits(out)[0]);
    return std::pair{out[0], s};
  };
  // -3: sqrt(3) sqrt(3) rounds to 3, scale 1 / 448, code -448: decodes to -3, the value.
  const auto [minus3, s3] = decoded(-3.0f);
  CHECK(s3.scales[0] == 1.0f / 448.0f);
  CHECK(minus3 == -3.0f);
  // -2: the center rounds below 2, scale = inf, y = -inf, code NaN: +center, the sign lost as on
  // the kernel's GPU. -6: the center rounds above 6, scale 0, code 0 / 0: +center too.
  const auto [minus2, s2] = decoded(-2.0f);
  CHECK(std::isinf(s2.scales[0]));
  CHECK(minus2 == s2.centers[0]);
  const auto [minus6, s6] = decoded(-6.0f);
  CHECK(s6.scales[0] == 0.0f);
  CHECK(minus6 == s6.centers[0]);
  // A second moment of 1e-30 (a group whose gradients are all 0, after a step): max = min =
  // 2e-30, max / center > 1, scale = inf, y = 0^inf = 0, code 0, 0 x inf = NaN: +center. With
  // x86's NaN sign it decoded to -center, a negative second moment, and sqrt made the weights NaN.
  const auto [tiny, st] = decoded(1e-30f);
  CHECK(std::isinf(st.scales[0]));
  CHECK(st.codes[0] == 0u);
  CHECK(tiny > 0.0f);
  CHECK(tiny == st.centers[0]);
  // All zeros: max = min = 1e-30, center = max exactly, scale 1 / 448, code 0: +center.
  const auto [zero, sz] = decoded(0.0f);
  CHECK(sz.scales[0] == 1.0f / 448.0f);
  CHECK(zero == sz.centers[0]);

  // Through AdamW: a tensor whose gradients are all 0 keeps finite weights and non-negative
  // second moments (before the fix the weights were NaN within 4 steps).
  OptimizerPrecision p;
  p.m = {StateFormat::kE4M3, StateScaling::kPerBlock, 128, Expansion::kCoat, 16};
  p.v = p.m;
  auto state = initial_moments(256, p);
  auto w = normal(256, 0.02f, 3);
  std::vector<float> g(256, 0.0f);
  for (std::size_t i = 128; i < 256; ++i) g[i] = 1e-3f * static_cast<float>(i % 7 + 1);
  int infinite_scales = 0;
  for (int step = 1; step <= 40; ++step) {
    adamw_step(hyper_at(step), p, w, g, state, 0, 0);
    infinite_scales += std::isinf(state.v.scales[0]) ? 1 : 0;
    std::vector<float> m(256), v(256);
    decode_state(state.m, p.m, m);
    decode_state(state.v, p.v, v);
    INFO("step " << step);
    REQUIRE(std::all_of(w.begin(), w.end(), [](float x) { return std::isfinite(x); }));
    REQUIRE(std::all_of(v.begin(), v.end(), [](float x) { return x >= 0.0f; }));
    REQUIRE(std::all_of(m.begin(), m.begin() + 128, [](float x) { return x > 0.0f; }));
  }
  CHECK(infinite_scales > 0);  // the case above was reached
}

TEST_CASE("bf16 states round to nearest even, unscaled") {
  const std::size_t n = 300;
  OptimizerPrecision p;
  p.m.format = p.v.format = StateFormat::kBf16;
  auto state = initial_moments(n, p);
  std::vector<float> m_ref(n, 0.0f), v_ref(n, 0.0f);
  auto w = normal(n, 0.02f, 3), w_ref = w;
  for (int step = 1; step <= kSteps; ++step) {
    const auto g = gradient(n, step);
    adamw_step(hyper_at(step), p, w, g, state, 0, 0);
    const auto mv = new_moments(hyper_at(step), m_ref, v_ref, g);
    update_weights(hyper_at(step), mv, w_ref);
    for (std::size_t i = 0; i < n; ++i) {
      m_ref[i] = sim::bf16_to_fp32(sim::fp32_to_bf16(mv.m[i]));
      v_ref[i] = sim::bf16_to_fp32(sim::fp32_to_bf16(mv.v[i]));
      REQUIRE(state.m.codes[i] == sim::fp32_to_bf16(mv.m[i]));
      REQUIRE(state.v.codes[i] == sim::fp32_to_bf16(mv.v[i]));
    }
    REQUIRE(bits(w) == bits(w_ref));
  }
  CHECK(state.m.scales.empty());
}

TEST_CASE("fp32 states keep the moments' bits") {
  const std::size_t n = 200;
  OptimizerPrecision p;
  auto state = initial_moments(n, p);
  std::vector<float> m_ref(n, 0.0f), v_ref(n, 0.0f);
  auto w = normal(n, 0.02f, 5), w_ref = w;
  for (int step = 1; step <= kSteps; ++step) {
    const auto g = gradient(n, step);
    const auto e = adamw_step(hyper_at(step), p, w, g, state, 0, 0);
    const auto mv = new_moments(hyper_at(step), m_ref, v_ref, g);
    update_weights(hyper_at(step), mv, w_ref);
    m_ref = mv.m;
    v_ref = mv.v;
    REQUIRE(state.m.codes == bits(m_ref));
    REQUIRE(state.v.codes == bits(v_ref));
    REQUIRE(bits(w) == bits(w_ref));
    CHECK(e.m_noise == 0.0);
    CHECK(e.update_noise == 0.0);
    CHECK(e.m_signal > 0.0);
  }
}

TEST_CASE("bf16 master weights: nearest even, or stochastic with Philox's bits") {
  const std::size_t n = 500;
  for (const auto master : {MasterWeights::kBf16, MasterWeights::kBf16Stochastic}) {
    OptimizerPrecision p;
    p.master = master;
    auto state = initial_moments(n, p);
    std::vector<float> m_ref(n, 0.0f), v_ref(n, 0.0f);
    auto w = normal(n, 0.02f, 11);
    for (auto& x : w) x = sim::bf16_to_fp32(sim::fp32_to_bf16(x));
    auto w_ref = w;
    const std::uint64_t seed = 42;
    for (int step = 1; step <= kSteps; ++step) {
      const auto g = gradient(n, step);
      const auto stream = static_cast<std::uint64_t>(step);
      const auto e = adamw_step(hyper_at(step), p, w, g, state, seed, stream);
      const auto mv = new_moments(hyper_at(step), m_ref, v_ref, g);
      update_weights(hyper_at(step), mv, w_ref);
      m_ref = mv.m;
      v_ref = mv.v;
      for (std::size_t i = 0; i < n; ++i) {
        const auto fp32_bits = std::bit_cast<std::uint32_t>(w_ref[i]);
        const std::uint32_t expected =
            master == MasterWeights::kBf16
                ? sim::fp32_to_bf16(w_ref[i])
                : (fp32_bits + (sim::philox_random_word(seed, stream, i) & 0xFFFFu)) >> 16;
        w_ref[i] = sim::bf16_to_fp32(static_cast<std::uint16_t>(expected));
      }
      REQUIRE(bits(w) == bits(w_ref));
      CHECK(e.update_noise > 0.0);
    }
  }
}

TEST_CASE("stochastic bf16 rounding: the carry, the bounds and the mean") {
  const float x = 1.0f + 0x1p-9f;  // halfway between bf16 1 and 1 + 2^-7: 0x3F804000
  CHECK(fp32_to_bf16_stochastic(x, 0x0000u) == 0x3F80);
  CHECK(fp32_to_bf16_stochastic(x, 0xBFFFu) == 0x3F80);
  CHECK(fp32_to_bf16_stochastic(x, 0xC000u) == 0x3F81);
  CHECK(fp32_to_bf16_stochastic(-x, 0xC000u) == 0xBF81);
  CHECK(fp32_to_bf16_stochastic(1.0f, 0xFFFFu) == 0x3F80);  // exact values never move
  double sum = 0;
  const int draws = 1 << 16;
  for (int i = 0; i < draws; ++i) {
    sum += sim::bf16_to_fp32(fp32_to_bf16_stochastic(x, sim::philox_random_word(1, 2, i)));
  }
  // E = x; one draw's spread is 2^-7 / 2, so the mean's is 2^-8 / 256 = 1.5e-5.
  CHECK(std::fabs(sum / draws - x) < 8e-5);
}

TEST_CASE("exact_power and exact_log2 against libm") {
  for (const float x : {1e-30f, 0.003f, 0.5f, 1.5f, 7.0f, 448.0f, 1e30f}) {
    for (const float k : {0.0625f, 0.5f, 1.0f, 2.0f, 8.3125f, 16.0f}) {
      const double want = std::pow(static_cast<double>(x), static_cast<double>(k));
      if (want > 3e38 || want < 1e-37) continue;
      CHECK(exact_power(x, k) == Approx(want).epsilon(1e-6));
    }
    CHECK(exact_log2(x) == Approx(std::log2(static_cast<double>(x))).epsilon(1e-14));
  }
  CHECK(exact_log2(1024.0) == 10.0);
  CHECK(exact_power(0.0f, 0.0f) == 1.0f);
  CHECK(exact_power(0.0f, 2.0f) == 0.0f);
  CHECK(exact_power(0.5f, INFINITY) == 0.0f);
  CHECK(exact_power(2.0f, 10.0f) == 1024.0f);
}

TEST_CASE("a state's element count and COAT's expansion outside per_block e4m3 are errors") {
  StateQuantization q{StateFormat::kE5M2, StateScaling::kPerBlock, 128, Expansion::kCoat, 16};
  CHECK_THROWS(initial_state(10, q));
  StateQuantization ok{StateFormat::kE4M3};
  auto s = initial_state(10, ok);
  std::vector<float> x(11);
  CHECK_THROWS(encode_state(x, ok, s));
}

}  // namespace
}  // namespace fp8lab::testing
