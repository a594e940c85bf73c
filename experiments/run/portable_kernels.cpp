#include "experiments/run/portable_kernels.hpp"

#include <ATen/Context.h>
#include <c10/util/Exception.h>
#include <torch/library.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <mutex>

namespace fp8lab::experiments {
namespace {

// One element-wise function in fp32 and fp64: the C library's (glibc's; sqrt is IEEE's correctly
// rounded square root, so any compiler and CPU give it alike).
struct UnaryFunction {
  const char* name;
  float (*f32)(float);
  double (*f64)(double);
};

// at::vml's MKL list (ATen/cpu/vml.h, IMPLEMENT_VML_MKL), less abs and trunc, which are exact
// whoever computes them, and erfinv, which the C library lacks (no workload calls it).
#define FP8LAB_UNARY(op)                                                         \
  UnaryFunction {                                                                \
#op, [](float x) { return std::op(x); }, [](double x) { return std::op(x); } \
  }
const UnaryFunction kFunctions[] = {
    FP8LAB_UNARY(sqrt),  FP8LAB_UNARY(exp),   FP8LAB_UNARY(expm1), FP8LAB_UNARY(log),
    FP8LAB_UNARY(log10), FP8LAB_UNARY(log1p), FP8LAB_UNARY(log2),  FP8LAB_UNARY(sin),
    FP8LAB_UNARY(cos),   FP8LAB_UNARY(tan),   FP8LAB_UNARY(asin),  FP8LAB_UNARY(acos),
    FP8LAB_UNARY(atan),  FP8LAB_UNARY(sinh),  FP8LAB_UNARY(cosh),  FP8LAB_UNARY(tanh),
    FP8LAB_UNARY(erf),   FP8LAB_UNARY(erfc),
};
#undef FP8LAB_UNARY

// out = f(self) element by element, in self's precision (fp16 and bf16 through fp32, as ATen
// computes them); an integer or bool input gives the default floating type, as ATen's does.
void apply(const UnaryFunction& f, const at::Tensor& self, at::Tensor& out) {
  // to() keeps a non-contiguous input's strides: contiguous() after it, as the loops read flat.
  auto input = (self.is_floating_point()
                    ? self
                    : self.to(c10::typeMetaToScalarType(c10::get_default_dtype())))
                   .contiguous();
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "fp8lab portable numerics: ", f.name,
              " writes ", out.scalar_type(), " from ", input.scalar_type(),
              "; only the input's own floating type is supported");
  if (!out.sizes().equals(input.sizes())) out.resize_(input.sizes());
  // In place on a contiguous self, input is self: each element is read before it is written.
  auto result = out.is_contiguous() ? out : at::empty_like(input);
  const auto n = input.numel();
  switch (input.scalar_type()) {
    case at::kFloat: {
      const auto* x = input.const_data_ptr<float>();
      auto* y = result.data_ptr<float>();
      for (std::int64_t i = 0; i < n; ++i) y[i] = f.f32(x[i]);
      break;
    }
    case at::kDouble: {
      const auto* x = input.const_data_ptr<double>();
      auto* y = result.data_ptr<double>();
      for (std::int64_t i = 0; i < n; ++i) y[i] = f.f64(x[i]);
      break;
    }
    case at::kHalf: {
      const auto* x = input.const_data_ptr<at::Half>();
      auto* y = result.data_ptr<at::Half>();
      for (std::int64_t i = 0; i < n; ++i) y[i] = at::Half(f.f32(static_cast<float>(x[i])));
      break;
    }
    case at::kBFloat16: {
      const auto* x = input.const_data_ptr<at::BFloat16>();
      auto* y = result.data_ptr<at::BFloat16>();
      for (std::int64_t i = 0; i < n; ++i) y[i] = at::BFloat16(f.f32(static_cast<float>(x[i])));
      break;
    }
    default:
      TORCH_CHECK(false, "fp8lab portable numerics: ", f.name, " of ", input.scalar_type(),
                  " is not supported (FP8LAB_CPU_NUMERICS=native computes it)");
  }
  if (!result.is_same(out)) out.copy_(result);
}

// The boxed CPU kernel of one function's three overloads: op(self), op_(self) and
// op.out(self, *, out).
class PortableUnaryKernel final : public c10::OperatorKernel {
 public:
  explicit PortableUnaryKernel(const UnaryFunction& f) : f_(f) {}
  void operator()(const c10::OperatorHandle& handle, c10::DispatchKeySet,
                  torch::jit::Stack* stack) {
    const auto& schema = handle.schema();
    if (schema.overload_name() == "out") {
      auto out = (*stack)[1].toTensor();
      const auto self = (*stack)[0].toTensor();
      stack->clear();
      apply(f_, self, out);
      stack->emplace_back(std::move(out));
    } else if (schema.name().back() == '_') {
      auto self = (*stack)[0].toTensor();
      stack->clear();
      TORCH_CHECK(self.is_floating_point(), "fp8lab portable numerics: ", f_.name,
                  "_ needs a floating tensor, got ", self.scalar_type());
      apply(f_, self, self);
      stack->emplace_back(std::move(self));
    } else {
      const auto self = (*stack)[0].toTensor();
      stack->clear();
      auto out = at::empty(
          {0}, self.options().dtype(self.is_floating_point()
                                        ? self.scalar_type()
                                        : c10::typeMetaToScalarType(c10::get_default_dtype())));
      apply(f_, self, out);
      stack->emplace_back(std::move(out));
    }
  }

 private:
  const UnaryFunction& f_;
};

// LibTorch warns once per replaced kernel ("Overriding a previously registered kernel"); here that
// is the point, so the warnings are dropped while registering.
class SilentWarnings final : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};

}  // namespace

void use_portable_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    SilentWarnings silent;
    const c10::WarningUtils::WarningHandlerGuard guard(&silent);
    // Kept for the process's lifetime: the registrations end with the Library object.
    static auto* library =
        new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    for (const auto& f : kFunctions) {
      for (const auto& name :
           {std::string(f.name), std::string(f.name) + "_", std::string(f.name) + ".out"}) {
        library->impl(name.c_str(), torch::CppFunction::makeFromBoxedFunctor(
                                        std::make_unique<PortableUnaryKernel>(f)));
      }
    }
    at::globalContext().setUserEnabledMkldnn(false);
  });
}

const std::vector<std::string>& portable_kernel_ops() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& f : kFunctions) list.emplace_back(f.name);
    return list;
  }();
  return names;
}

}  // namespace fp8lab::experiments
