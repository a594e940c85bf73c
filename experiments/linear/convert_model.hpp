// Model conversion, the seed API's convert_model / has_transformer_engine_layers for LibTorch
// (te-accelerate.md §1.4, §1.6; accelerate's AO filter):
//
//   auto backend = std::make_shared<const SimBackend>();
//   auto converted = convert_model(*model, recipe, backend);        // FP8 where the filter allows
//   convert_model_to_high_precision(*model, backend);               // every other Linear: baseline
//   has_fp8_layers(*model);                                          // true if any was converted
//
// How a Linear is swapped: the parent's registered child is replaced (Module::replace_module);
// inside torch::nn::Sequential, ModuleList and ModuleDict the container's own entry is replaced
// too, so they call the new module. A custom module must call its Linears by name at each forward
// (the registered child; workloads do it through forward_linear), because a C++ member holder
// (torch::nn::Linear fc) keeps pointing at the old Linear, which no conversion can see. The new
// module holds the old one's weight and bias tensors themselves: optimizers built before the
// conversion keep working, and the state dict keeps its names ("fc.weight").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "experiments/linear/backend.hpp"
#include "experiments/linear/linear_stats.hpp"
#include "recipes/recipe.hpp"

namespace torch::nn {
class Module;
}

namespace fp8lab::experiments {

// The user-supplied filter of the seed's AORecipeKwargs.module_filter_func: called with the fully
// qualified name ("blocks.0.mlp_fc") and the torch::nn::LinearImpl; true = convert.
using LinearPredicate = std::function<bool(const std::string& name, const torch::nn::Module&)>;

struct ConvertOptions {
  // The Linears' high-precision GEMMs (overrides, eval, unconverted): the baseline's operands.
  HighPrecision high_precision = HighPrecision::fp32;
  LinearPredicate predicate;  // empty: convert every Linear the recipe's module_filter allows
};

// Replaces, recursively, every torch::nn::Linear of `model` that passes the filter by an
// Fp8Linear running `recipe` on `backend` (its own scaling state). Returns the converted Linears'
// fully qualified names in visiting order. The filter, in order (recipe.module_filter):
//   1. require_dims_divisible_by_16: skip a Linear whose in_features or out_features % 16 != 0
//      (accelerate's convert_model rule). With skip_later_siblings_after_indivisible this
//      reproduces accelerate's bare `return` (§1.4): the rest of that Linear's siblings are then
//      neither converted nor visited. Off, only that Linear is skipped. (Which is the default is
//      recipes::ModuleFilter's business; set the field explicitly when it matters.)
//   2. skip_first_last_linear: skip the first and the last torch::nn::Linear of model.
//      named_modules() (pre-order), accelerate's AO default (§1.6).
// A Linear is any module that dynamic_casts to torch::nn::LinearImpl, the peers' isinstance
// (accelerate's find_first_last_linear_layers and filter_linear_layers, src/accelerate/utils/
// ao.py, and its TE convert_model; torchao's swap_linear_layers): python/fp8lab/convert.py has the
// same rule. LibTorch has no subclass of LinearImpl (MultiheadAttention's out_proj is a plain
// Linear), so in C++ isinstance and exact type pick the same Linears; first and last are those of
// named_modules(), as accelerate's. On Sequential(TransformerEncoderLayer, Flatten, Linear) the
// first is self_attn.out_proj and the last the head, as in Python (linear_convert_test).
// Converted is not called: MultiheadAttention reads out_proj->weight itself, and LibTorch's
// TransformerEncoderLayer calls linear1 / linear2 through its member holders, so none of these
// runs after conversion; fp8_linears_not_run (below) names them after a step.
//   3. skip_names: skip names matching any glob (* any run of characters, ? one character).
//   4. options.predicate, when given: skip where it returns false.
// Modules already converted (Fp8Linear, HighPrecisionLinear) are left alone. Throws
// std::invalid_argument for a Linear whose weight is not float32.
std::vector<std::string> convert_model(torch::nn::Module& model, const recipes::Recipe& recipe,
                                       std::shared_ptr<const LinearBackend> backend,
                                       const ConvertOptions& options = {});

// Replaces every remaining torch::nn::Linear by a HighPrecisionLinear (no filter): the baseline
// model, and the Linears of an FP8 model that convert_model skipped, so that FP8 and baseline runs
// differ only in the FP8 layers. Returns the converted names.
std::vector<std::string> convert_model_to_high_precision(
    torch::nn::Module& model, std::shared_ptr<const LinearBackend> backend,
    HighPrecision high_precision = HighPrecision::fp32);

// Whether any module of model (itself included) is an Fp8Linear.
bool has_fp8_layers(const torch::nn::Module& model);

// The Fp8Linears of model (named_modules() order) whose forward GEMM has not run, in FP8 or high
// precision, since their statistics were last reset: after a training step, the converted Linears
// the model never calls (a member holder or a module that reads the weight itself, above). The
// runner records them (run_diagnostics.hpp: `fp8_linears_not_run`).
std::vector<std::string> fp8_linears_not_run(const torch::nn::Module& model);

// Every backend-driven Linear (Fp8Linear or HighPrecisionLinear) of model with its statistics,
// in named_modules() order.
struct NamedLinearStats {
  std::string name;
  bool fp8 = false;  // an Fp8Linear (else a HighPrecisionLinear)
  LinearStats stats;
};
std::vector<NamedLinearStats> collect_linear_stats(const torch::nn::Module& model);
void reset_linear_stats(torch::nn::Module& model);
// BackendLinearImpl::set_measure_operands on every backend-driven Linear of model.
void set_measure_operands(torch::nn::Module& model, bool on);

}  // namespace fp8lab::experiments
