// What every op of the Python package shares, without LibTorch: the recipe text parsed once
// (recipes/recipe_file.hpp, cached by text), the operand and GEMM names, and the plan of the one
// lowering (recipes/lowering.hpp). The ops (kernels.cpp) and the fake kernels' shape questions
// (module.cpp) both ask here, so the two never lower a recipe differently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "recipes/recipe.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/plan.hpp"
#include "sim/settings.hpp"

namespace fp8lab::python {

// The recipe written as an fp8lab recipe file's text (YAML: "scaling: mxfp8\nmx_scale_mode:
// floor", or one line "{scaling: current, fp8_format: E4M3}"; empty text is the default recipe),
// read with recipes::parse_recipe_text, so the fields, values and messages are the CLI's.
// Throws recipes::RecipeError. Parsed once per distinct text (a bounded cache, thread-safe).
std::shared_ptr<const recipes::Recipe> parsed_recipe(const std::string& text);

// "input", "weight", "grad_output" / "fprop", "dgrad", "wgrad"; anything else throws
// std::invalid_argument naming `function`, the value and what is accepted.
sim::scaling::Operand parse_operand(const char* function, std::string_view name);
sim::scaling::Gemm parse_gemm(const char* function, std::string_view name);

// One operand of one GEMM under a recipe: the recipe, its plan (recipes::plan), and whether the
// recipe runs that GEMM in FP8 at all (recipes::gemm_runs_fp8).
struct Lowered {
  std::shared_ptr<const recipes::Recipe> recipe;
  sim::scaling::Operand operand;
  sim::scaling::Gemm gemm;
  sim::scaling::QuantizePlan plan;
  bool runs_fp8 = true;
};
// Throws as parsed_recipe and the parsers above, and std::invalid_argument when `operand` is not
// an operand of `gemm` (the lowering's message).
Lowered lowered(const char* function, const std::string& recipe, std::string_view operand,
                std::string_view gemm);
// The same, refusing (std::invalid_argument) a GEMM the recipe keeps in high precision: there is
// nothing to quantize for it.
Lowered lowered_fp8(const char* function, const std::string& recipe, std::string_view operand,
                    std::string_view gemm);

// sim's quantization of the row-major [rows, cols] x under l's plan: delayed scaling casts with
// `scale` (the slot's current scale, sim::scaling::quantize_per_tensor, as
// DelayedScalingState::quantize does), every other plan computes its own (sim::scaling::quantize).
// The caller has checked that `scale` is given exactly for delayed scaling. The op
// fp8lab::quantize and the statistics of fp8lab._C.quantize_stats both run this.
sim::scaling::QuantizeResult quantize_lowered(const char* function, const Lowered& l,
                                              std::span<const float> x, std::int64_t rows,
                                              std::int64_t cols, std::optional<float> scale);

// The GEMM a pass's delayed-scaling slot belongs to: fprop for input and weight (the forward
// pass), dgrad for grad_output (the backward pass); its plan has the pass's element format.
sim::scaling::Gemm pass_gemm(sim::scaling::Operand operand);

// Scale blocks of a [rows, cols] operand under `plan`: ceil(rows / block rows) x ceil(cols /
// block cols) (sim::QuantizedTensor::scale_rows / scale_cols).
struct ScaleShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};
ScaleShape scale_shape(const sim::scaling::QuantizePlan& plan, std::int64_t rows,
                       std::int64_t cols);

}  // namespace fp8lab::python
