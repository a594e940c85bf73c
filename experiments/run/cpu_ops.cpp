#include "experiments/run/cpu_ops.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <cinttypes>
#include <cstdio>
#include <functional>
#include <mutex>
#include <sstream>
#include <string_view>
#include <utility>

#include "experiments/run/training.hpp"
#include "experiments/workloads/registry.hpp"

namespace fp8lab::experiments {
namespace {

using Outputs = std::vector<std::pair<std::string, torch::Tensor>>;

// Inputs from integers only: splitmix64 draws, each value the sum of four uniform integers in
// [-2^20, 2^20) (an integer below 2^23, so exact in fp32) times 2^-20 times a scale. Roughly
// normal with sd 1.15 * scale; the same bits on every machine and compiler.
class Inputs {
 public:
  torch::Tensor normal(std::vector<std::int64_t> shape, float scale = 1.0F) {
    auto out = torch::empty(shape, torch::kFloat);
    auto* data = out.data_ptr<float>();
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      std::int64_t sum = 0;
      for (int j = 0; j < 4; ++j) sum += static_cast<std::int64_t>(next() >> 43) - (1LL << 20);
      data[i] = static_cast<float>(sum) * 0x1p-20F * scale;
    }
    return out;
  }
  torch::Tensor integers(std::vector<std::int64_t> shape, std::int64_t below) {
    auto out = torch::empty(shape, torch::kLong);
    auto* data = out.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      data[i] = static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(below));
    }
    return out;
  }

 private:
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_ = 1234;
};

torch::Tensor with_grad(torch::Tensor t) { return t.requires_grad_(true); }

std::string dims(std::int64_t m, std::int64_t k, std::int64_t n) {
  return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
}

struct Group {
  CpuOpEntry entry;
  std::function<Outputs(Inputs&)> compute;
};

// What a llama-xs or gpt-tiny step and eval compute (d_model 128, SwiGLU hidden 352, vocabulary
// 4096, 8 windows of 64 tokens, 4 heads of 32), each group on fresh inputs. A group's `covers`
// names the ATen ops its outputs go through; trace_cpu_ops finds the ops a real run calls.
std::vector<Group> groups() {
  std::vector<Group> list;
  // Every GEMM shape of llama-xs's forward (x W^T as torch::linear computes it) and backward
  // (dX = dY W, dW = dY^T X), and the eval's.
  for (const auto& [m, k, n] :
       std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{{512, 128, 128},
                                                                         {512, 128, 352},
                                                                         {512, 352, 128},
                                                                         {512, 128, 4096},
                                                                         {64, 64, 64}}) {
    list.push_back({{"linear " + dims(m, k, n), {"aten::linear", "aten::matmul", "aten::mm"}},
                    [m, k, n](Inputs& in) -> Outputs {
                      auto x = with_grad(in.normal({8, m / 8, k}));
                      auto w = with_grad(in.normal({n, k}, 0.0625F));
                      auto y = torch::linear(x, w);
                      y.backward(in.normal({8, m / 8, n}));
                      return {{"linear " + dims(m, k, n), y},
                              {"linear dx " + dims(m, k, n), x.grad()},
                              {"linear dw " + dims(m, k, n), w.grad()}};
                    }});
  }
  list.push_back({{"addmm 512x128x128", {"aten::addmm"}}, [](Inputs& in) -> Outputs {
                    auto x = with_grad(in.normal({512, 128}));
                    auto w = with_grad(in.normal({128, 128}, 0.0625F));
                    auto b = with_grad(in.normal({128}));
                    auto y = torch::linear(x, w, b);
                    y.backward(in.normal({512, 128}));
                    return {{"addmm 512x128x128", y}, {"addmm db", b.grad()}};
                  }});
  // Attention as CausalSelfAttention computes it: RoPE, scores, causal mask, softmax, values.
  list.push_back(
      {{"attention",
        {"aten::matmul", "aten::bmm", "aten::softmax", "aten::_softmax", "aten::masked_fill",
         "aten::masked_fill_", "aten::triu", "aten::div", "aten::_softmax_backward_data",
         "aten::mul", "aten::add", "aten::neg", "aten::cat", "aten::sub", "aten::sum"}},
       [](Inputs& in) -> Outputs {
         auto q = with_grad(in.normal({8, 4, 64, 32}));
         auto k = with_grad(in.normal({8, 4, 64, 32}));
         auto v = with_grad(in.normal({8, 4, 64, 32}));
         auto cos = in.normal({64, 32}, 0.5F), sin = in.normal({64, 32}, 0.5F);
         auto rope = [&](const torch::Tensor& x) {
           auto rotated = torch::cat({-x.slice(-1, 16), x.slice(-1, 0, 16)}, -1);
           return x * cos + rotated * sin;
         };
         auto scores = torch::matmul(rope(q), rope(k).transpose(-2, -1)) / std::sqrt(32.0);
         auto mask = torch::ones({64, 64}, torch::kBool).triu(1);
         scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
         auto probabilities = torch::softmax(scores, -1);
         auto o = torch::matmul(probabilities, v);
         o.backward(in.normal({8, 4, 64, 32}));
         return {{"attention softmax", probabilities},
                 {"attention out", o},
                 {"attention dq", q.grad()},
                 {"attention dk", k.grad()},
                 {"attention dv", v.grad()}};
       }});
  // RoPE's tables as rope_tables builds them: fp64 pow, outer, cos and sin, then fp32.
  list.push_back({{"rope tables",
                   {"aten::pow", "aten::arange", "aten::outer", "aten::cos", "aten::sin",
                    "aten::div", "aten::neg", "aten::mul", "aten::cat"}},
                  [](Inputs&) -> Outputs {
                    const auto options = torch::TensorOptions().dtype(torch::kDouble);
                    auto inverse = torch::pow(10000.0, -torch::arange(0, 32, 2, options) / 32.0);
                    auto angles = torch::outer(torch::arange(64, options), inverse);
                    angles = torch::cat({angles, angles}, -1);
                    return {{"rope cos", angles.cos().to(torch::kFloat)},
                            {"rope sin", angles.sin().to(torch::kFloat)}};
                  }});
  // RmsNorm as llama_modules.cpp writes it (not F::rms_norm).
  list.push_back({{"rms_norm",
                   {"aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul", "aten::sum",
                    "aten::div", "aten::expand"}},
                  [](Inputs& in) -> Outputs {
                    auto x = with_grad(in.normal({8, 64, 128}));
                    auto w = with_grad(in.normal({128}));
                    auto y = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-5) * w;
                    y.backward(in.normal({8, 64, 128}));
                    return {{"rms_norm", y}, {"rms_norm dx", x.grad()}, {"rms_norm dw", w.grad()}};
                  }});
  list.push_back(
      {{"layer_norm",
        {"aten::layer_norm", "aten::native_layer_norm", "aten::native_layer_norm_backward"}},
       [](Inputs& in) -> Outputs {
         auto x = with_grad(in.normal({512, 128}));
         auto w = with_grad(in.normal({128})), b = with_grad(in.normal({128}));
         auto y = torch::layer_norm(x, {128}, w, b);
         y.backward(in.normal({512, 128}));
         return {{"layer_norm", y},
                 {"layer_norm dx", x.grad()},
                 {"layer_norm dw", w.grad()},
                 {"layer_norm db", b.grad()}};
       }});
  // Elementwise activations, forward and backward, on a SwiGLU hidden's shape.
  using Unary = std::function<torch::Tensor(const torch::Tensor&)>;
  for (const auto& [name, aten, f] : std::vector<std::tuple<std::string, std::string, Unary>>{
           {"silu", "aten::silu", [](const torch::Tensor& v) { return torch::silu(v); }},
           {"gelu", "aten::gelu", [](const torch::Tensor& v) { return torch::gelu(v); }},
           {"gelu_tanh", "aten::gelu",
            [](const torch::Tensor& v) { return torch::gelu(v, "tanh"); }},
           {"relu", "aten::relu", [](const torch::Tensor& v) { return torch::relu(v); }},
           {"tanh", "aten::tanh", [](const torch::Tensor& v) { return torch::tanh(v); }},
           {"exp", "aten::exp", [](const torch::Tensor& v) { return torch::exp(v); }},
           {"log_abs", "aten::log",
            [](const torch::Tensor& v) { return torch::log(v.abs() + 1e-3); }},
           {"sqrt_abs", "aten::sqrt",
            [](const torch::Tensor& v) { return torch::sqrt(v.abs() + 1e-3); }},
           {"swiglu product", "aten::mul",
            [](const torch::Tensor& v) { return torch::silu(v) * (v + 0.5); }}}) {
    list.push_back({{name, {aten, aten + "_backward", "aten::mul", "aten::add", "aten::abs"}},
                    [name, f](Inputs& in) -> Outputs {
                      auto v = with_grad(in.normal({512, 352}, 2.0F));
                      auto y = f(v);
                      y.backward(in.normal({512, 352}));
                      return {{name, y}, {name + " grad", v.grad()}};
                    }});
  }
  // The loss as training computes it (mean) and as the eval does (per token, then per window,
  // then fp64), with the backward of the mean.
  list.push_back({{"cross_entropy",
                   {"aten::cross_entropy_loss", "aten::log_softmax", "aten::_log_softmax",
                    "aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss_forward",
                    "aten::nll_loss_backward", "aten::_log_softmax_backward_data", "aten::mean"}},
                  [](Inputs& in) -> Outputs {
                    auto logits = with_grad(in.normal({512, 4096}, 2.0F));
                    auto target = in.integers({512}, 4096);
                    auto loss = torch::cross_entropy_loss(logits, target);
                    loss.backward();
                    torch::NoGradGuard no_grad;
                    auto examples = torch::nn::functional::cross_entropy(
                                        logits, target,
                                        torch::nn::functional::CrossEntropyFuncOptions().reduction(
                                            torch::kNone))
                                        .view({8, -1})
                                        .mean(1);
                    return {{"cross_entropy", loss},
                            {"cross_entropy grad", logits.grad()},
                            {"cross_entropy per window", examples},
                            {"eval mean fp64", examples.to(torch::kDouble).mean()}};
                  }});
  list.push_back(
      {{"mse_loss", {"aten::mse_loss", "aten::mse_loss_backward"}}, [](Inputs& in) -> Outputs {
         auto y = with_grad(in.normal({256, 10}));
         auto loss = torch::mse_loss(y, in.normal({256, 10}));
         loss.backward();
         return {{"mse_loss", loss}, {"mse_loss grad", y.grad()}};
       }});
  list.push_back({{"embedding",
                   {"aten::embedding", "aten::embedding_backward", "aten::embedding_dense_backward",
                    "aten::index_select"}},
                  [](Inputs& in) -> Outputs {
                    auto table = with_grad(in.normal({4096, 128}));
                    auto index = in.integers({8, 64}, 4096);
                    auto y = torch::embedding(table, index);
                    y.backward(in.normal({8, 64, 128}));
                    return {{"embedding", y}, {"embedding grad", table.grad()}};
                  }});
  list.push_back({{"reductions",
                   {"aten::sum", "aten::mean", "aten::norm", "aten::linalg_vector_norm",
                    "aten::max", "aten::amax", "aten::abs", "aten::std"}},
                  [](Inputs& in) -> Outputs {
                    auto s = in.normal({1 << 20});
                    auto x = in.normal({512, 4096});
                    return {{"sum 2^20", s.sum()},
                            {"mean 2^20", s.mean()},
                            {"norm 2^20", s.norm()},
                            {"sum dim 512x4096", x.sum(-1)},
                            {"mean dim 8x64", x.slice(1, 0, 64).reshape({-1, 64}).mean(1)},
                            {"amax abs", x.abs().amax()},
                            {"fp64 mean", x.to(torch::kDouble).mean()},
                            {"fp64 std", x.to(torch::kDouble).std()}};
                  }});
  // The optimizer side of a step: clip_grad_norm_ and three AdamW steps (the C++ API's).
  list.push_back({{"optimizer",
                   {"aten::linalg_vector_norm",
                    "aten::norm",
                    "aten::stack",
                    "aten::mul_",
                    "aten::add_",
                    "aten::addcmul_",
                    "aten::addcdiv_",
                    "aten::sqrt",
                    "aten::div",
                    "aten::lerp_",
                    "aten::_foreach_norm",
                    "aten::clamp",
                    "aten::clamp_max",
                    "aten::clamp_",
                    "aten::mul",
                    "aten::div_",
                    "aten::add",
                    "aten::pow",
                    "aten::sub",
                    "aten::zero_",
                    "aten::reciprocal"}},
                  [](Inputs& in) -> Outputs {
                    std::vector<torch::Tensor> ps = {in.normal({128, 128}), in.normal({4096, 128}),
                                                     in.normal({352, 128})};
                    for (auto& p : ps) {
                      p.requires_grad_(true);
                      p.mutable_grad() = in.normal(p.sizes().vec(), 0.01F);
                    }
                    Outputs out;
                    const auto total = torch::nn::utils::clip_grad_norm_(ps, 0.5);
                    out.emplace_back("clip_grad_norm total", torch::tensor(total, torch::kDouble));
                    for (std::size_t i = 0; i < ps.size(); ++i) {
                      out.emplace_back("clipped grad " + std::to_string(i), ps[i].grad().clone());
                    }
                    torch::optim::AdamW adamw(ps,
                                              torch::optim::AdamWOptions(1e-3).weight_decay(0.1));
                    const auto grads = [&] {
                      std::vector<torch::Tensor> g;
                      for (auto& p : ps) g.push_back(p.grad().clone());
                      return g;
                    }();
                    for (int step = 0; step < 3; ++step) {
                      for (std::size_t i = 0; i < ps.size(); ++i)
                        ps[i].mutable_grad() = grads[i] * (step + 1);
                      adamw.step();
                    }
                    for (std::size_t i = 0; i < ps.size(); ++i) {
                      out.emplace_back("adamw p" + std::to_string(i), ps[i].detach().clone());
                    }
                    return out;
                  }});
  // An integer input, transposed (not contiguous): promoted to fp32 before the function, as ATen
  // does; the two outputs are the same bits.
  list.push_back({{"sqrt of integers", {"aten::sqrt"}}, [](Inputs& in) -> Outputs {
                    auto counts = in.integers({64, 32}, 1000).t();
                    return {{"sqrt of integers, transposed", torch::sqrt(counts)},
                            {"sqrt of integers, contiguous", torch::sqrt(counts.contiguous())}};
                  }});
  // Initialization and batches: LibTorch's own sampling from a seeded generator.
  list.push_back({{"sampling",
                   {"aten::normal_", "aten::uniform_", "aten::randint", "aten::random_",
                    "aten::randperm", "aten::randn"}},
                  [](Inputs&) -> Outputs {
                    auto generator = at::make_generator<at::CPUGeneratorImpl>(7);
                    auto big = torch::empty({4096, 128}).normal_(0.0, 0.02, generator);
                    auto small = torch::empty({8}).normal_(0.0, 0.02, generator);
                    auto uniform = torch::empty({352, 128}).uniform_(-0.1, 0.1, generator);
                    auto offsets = torch::randint(0, 100000, {8}, generator, torch::kLong);
                    auto order = torch::randperm(1000, generator, torch::kLong);
                    auto randn = torch::randn({256, 10}, generator);
                    return {{"normal_ 4096x128", big}, {"normal_ 8", small}, {"uniform_", uniform},
                            {"randint", offsets},      {"randperm", order},  {"randn", randn}};
                  }});
  return list;
}

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, value);
  return text;
}

CpuOpHash hash_of(std::string name, const torch::Tensor& output) {
  const auto t = output.detach().contiguous().cpu();
  const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
  const auto size = static_cast<std::size_t>(t.numel()) * t.element_size();
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  // The fp64 sum in index order, in plain C++: a readable check that no library reduces.
  double sum = 0.0;
  if (t.is_floating_point()) {
    const auto d = t.to(torch::kDouble).contiguous();
    for (std::int64_t i = 0; i < d.numel(); ++i) sum += d.data_ptr<double>()[i];
  } else {
    const auto l = t.to(torch::kLong).contiguous();
    for (std::int64_t i = 0; i < l.numel(); ++i)
      sum += static_cast<double>(l.data_ptr<std::int64_t>()[i]);
  }
  return {std::move(name), t.sizes().vec(), hex64(h), sum};
}

}  // namespace

std::vector<CpuOpEntry> cpu_op_entries() {
  std::vector<CpuOpEntry> entries;
  for (auto& group : groups()) entries.push_back(std::move(group.entry));
  return entries;
}

std::vector<CpuOpHash> hash_cpu_ops() {
  Inputs inputs;
  std::vector<CpuOpHash> hashes;
  for (const auto& group : groups()) {
    for (const auto& [name, output] : group.compute(inputs))
      hashes.push_back(hash_of(name, output));
  }
  return hashes;
}

std::string cpu_op_line(const CpuOpHash& op) {
  std::ostringstream shape;
  for (std::size_t i = 0; i < op.shape.size(); ++i) shape << (i ? "x" : "") << op.shape[i];
  char sum[40];
  std::snprintf(sum, sizeof sum, "%.17g", op.sum);
  return op.name + "\t" + (op.shape.empty() ? "scalar" : shape.str()) + "\t" + op.hash + "\t" + sum;
}

std::map<std::string, std::int64_t> trace_cpu_ops(const std::string& workload_spec,
                                                  std::int64_t steps) {
  static std::mutex mutex;
  static std::map<std::string, std::int64_t>* calls = nullptr;
  std::map<std::string, std::int64_t> seen;
  {
    std::lock_guard lock(mutex);
    calls = &seen;
  }
  const auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn)
                                     -> std::unique_ptr<at::ObserverContext> {
        // The autograd engine's own entries (autograd::engine::evaluate_function: ...) wrap the
        // aten:: ops that do the backward's arithmetic, which are recorded themselves.
        const std::string_view name = fn.name();
        if (!name.starts_with("aten::")) return nullptr;
        std::lock_guard lock(mutex);
        if (calls != nullptr) ++(*calls)[std::string(name)];
        return nullptr;
      }).scopes({at::RecordScope::FUNCTION}));
  const auto workload = make_workload(workload_spec);
  TrainingOptions options;
  options.steps = steps;
  try {
    train(*workload, ModelHooks{}, options, nullptr);
  } catch (...) {
    at::removeCallback(handle);
    throw;
  }
  at::removeCallback(handle);
  std::lock_guard lock(mutex);
  calls = nullptr;
  return seen;
}

const std::set<std::string>& cpu_ops_without_arithmetic() {
  static const std::set<std::string> ops = {"aten::empty",
                                            "aten::empty_like",
                                            "aten::empty_strided",
                                            "aten::zeros",
                                            "aten::zeros_like",
                                            "aten::ones",
                                            "aten::ones_like",
                                            "aten::full",
                                            "aten::fill_",
                                            "aten::zero_",
                                            "aten::copy_",
                                            "aten::clone",
                                            "aten::detach",
                                            "aten::detach_",
                                            "aten::view",
                                            "aten::reshape",
                                            "aten::_reshape_alias",
                                            "aten::_unsafe_view",
                                            "aten::transpose",
                                            "aten::t",
                                            "aten::permute",
                                            "aten::expand",
                                            "aten::expand_as",
                                            "aten::slice",
                                            "aten::select",
                                            "aten::as_strided",
                                            "aten::unsqueeze",
                                            "aten::squeeze",
                                            "aten::contiguous",
                                            "aten::to",
                                            "aten::_to_copy",
                                            "aten::lift_fresh",
                                            "aten::alias",
                                            "aten::item",
                                            "aten::_local_scalar_dense",
                                            "aten::is_nonzero",
                                            "aten::resize_",
                                            "aten::set_",
                                            "aten::unfold",
                                            "aten::split",
                                            "aten::chunk",
                                            "aten::narrow",
                                            "aten::flatten",
                                            "aten::result_type",
                                            "aten::stack",
                                            "aten::cat",
                                            "aten::index_select",
                                            "aten::index",
                                            "aten::isfinite",
                                            "aten::isnan",
                                            "aten::eq",
                                            "aten::ne",
                                            "aten::lt",
                                            "aten::gt",
                                            "aten::ge",
                                            "aten::le",
                                            "aten::logical_not",
                                            "aten::all",
                                            "aten::any",
                                            "aten::where",
                                            "aten::new_empty",
                                            "aten::new_zeros",
                                            "aten::new_empty_strided",
                                            "aten::scalar_tensor",
                                            "aten::arange",
                                            "aten::linspace",
                                            "aten::lift",
                                            "aten::_has_compatible_shallow_copy_type",
                                            "aten::random_",
                                            "aten::resolve_conj",
                                            "aten::resolve_neg",
                                            "aten::slice_backward",
                                            "aten::select_backward"};
  return ops;
}

}  // namespace fp8lab::experiments
