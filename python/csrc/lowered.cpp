#include "python/csrc/lowered.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

#include "recipes/lowering.hpp"
#include "recipes/recipe_file.hpp"
#include "sim/element_count.hpp"
#include "sim/scaling/current.hpp"

namespace fp8lab::python {
namespace {

// Distinct recipe texts a process uses are few (one per model configuration); the bound only
// keeps a program that builds texts in a loop from growing without end.
constexpr std::size_t kMaxCachedRecipes = 256;

template <class Enum, std::size_t N>
Enum parse_name(const char* function, const char* what, std::string_view name,
                const Enum (&values)[N]) {
  std::string accepted;
  for (const Enum value : values) {
    if (name == sim::scaling::to_string(value)) return value;
    accepted.append(accepted.empty() ? "" : ", ").append(sim::scaling::to_string(value));
  }
  throw std::invalid_argument(std::string(function) + ": " + what + " '" + std::string(name) +
                              "'; accepted: " + accepted);
}

}  // namespace

std::shared_ptr<const recipes::Recipe> parsed_recipe(const std::string& text) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const recipes::Recipe>> cache;
  {
    const std::lock_guard lock(mutex);
    if (const auto it = cache.find(text); it != cache.end()) return it->second;
  }
  // Parsed outside the lock: a bad text throws here and is never cached.
  auto recipe = std::make_shared<const recipes::Recipe>(recipes::parse_recipe_text(text, "recipe"));
  const std::lock_guard lock(mutex);
  if (cache.size() >= kMaxCachedRecipes) cache.clear();
  cache.emplace(text, recipe);
  return recipe;
}

sim::scaling::Operand parse_operand(const char* function, std::string_view name) {
  using sim::scaling::Operand;
  static constexpr Operand kAll[] = {Operand::kInput, Operand::kWeight, Operand::kGradOutput};
  return parse_name(function, "operand", name, kAll);
}

sim::scaling::Gemm parse_gemm(const char* function, std::string_view name) {
  using sim::scaling::Gemm;
  static constexpr Gemm kAll[] = {Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad};
  return parse_name(function, "gemm", name, kAll);
}

Lowered lowered(const char* function, const std::string& recipe, std::string_view operand,
                std::string_view gemm) {
  Lowered out{parsed_recipe(recipe),
              parse_operand(function, operand),
              parse_gemm(function, gemm),
              {},
              true};
  try {
    out.plan = recipes::plan(*out.recipe, out.operand, out.gemm);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(function) + ": " + e.what());
  }
  out.runs_fp8 = recipes::gemm_runs_fp8(*out.recipe, out.gemm);
  return out;
}

Lowered lowered_fp8(const char* function, const std::string& recipe, std::string_view operand,
                    std::string_view gemm) {
  Lowered out = lowered(function, recipe, operand, gemm);
  if (!out.runs_fp8) {
    throw std::invalid_argument(
        std::string(function) + ": the recipe runs " + sim::scaling::to_string(out.gemm) +
        " in high precision (override_linear_precision, backward_override, or rowwise_with_gw_hp's "
        "wgrad), so it quantizes nothing for it; accepted: a GEMM the recipe runs in FP8");
  }
  return out;
}

sim::scaling::QuantizeResult quantize_lowered(const char* function, const Lowered& l,
                                              std::span<const float> x, std::int64_t rows,
                                              std::int64_t cols, std::optional<float> scale) {
  if (l.plan.kind == sim::scaling::QuantizeKind::kDelayed) {
    return sim::scaling::quantize_per_tensor(function, x, rows, cols, l.plan.format, scale.value());
  }
  return sim::scaling::quantize(l.plan, x, rows, cols);
}

sim::scaling::Gemm pass_gemm(sim::scaling::Operand operand) {
  return operand == sim::scaling::Operand::kGradOutput ? sim::scaling::Gemm::kDgrad
                                                       : sim::scaling::Gemm::kFprop;
}

ScaleShape scale_shape(const sim::scaling::QuantizePlan& plan, std::int64_t rows,
                       std::int64_t cols) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("scale_shape: rows = " + std::to_string(rows) +
                                ", cols = " + std::to_string(cols) + "; accepted: both >= 1");
  }
  const sim::scaling::BlockShape blocks = plan.blocks(rows, cols);
  return {sim::ceil_div(rows, blocks.rows), sim::ceil_div(cols, blocks.cols)};
}

}  // namespace fp8lab::python
