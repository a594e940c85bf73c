// convert_model, convert_model_to_high_precision and has_fp8_layers (te-accelerate.md §1.4, §1.6):
// which Linears are swapped under each filter rule, accelerate's bare-return quirk behind its
// option, that containers call the new modules, and that the new modules hold the old parameters;
// on LibTorch's TransformerEncoderLayer, what each peer's rule converts and which converted
// Linears never run (fp8_linears_not_run).
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <algorithm>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/high_precision_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "recipes/default_recipe.hpp"

namespace fp8lab::experiments {
namespace {

using Names = std::vector<std::string>;

// root: a0 (32->32), a1 (32->20: not divisible by 16), a2 (32->32), block { b0 (32->16) }, a3.
// A custom module: children registered by name, called by name.
struct Net : torch::nn::Module {
  Net() {
    register_module("a0", torch::nn::Linear(32, 32));
    register_module("a1", torch::nn::Linear(32, 20));
    register_module("a2", torch::nn::Linear(32, 32));
    auto block = std::make_shared<torch::nn::Module>("Block");
    block->register_module("b0", torch::nn::Linear(32, 16));
    register_module("block", block);
    register_module("a3", torch::nn::Linear(16, 16));
  }
};

// Every rule explicit (the member defaults are the recipes layer's business): dims % 16 on,
// accelerate's bare-return quirk off, nothing else.
recipes::ModuleFilter dims_filter() {
  recipes::ModuleFilter f;
  f.skip_names.clear();
  f.skip_first_last_linear = false;
  f.require_dims_divisible_by_16 = true;
  f.skip_later_siblings_after_indivisible = false;
  return f;
}

recipes::Recipe recipe_with(recipes::ModuleFilter filter) {
  recipes::Recipe r = test::fp32_seq_recipe(recipes::Scaling::delayed);
  r.module_filter = std::move(filter);
  return r;
}

Names fp8_names(torch::nn::Module& model) {
  Names names;
  for (const auto& item : model.named_modules("", false)) {
    if (dynamic_cast<Fp8LinearImpl*>(item.value().get()) != nullptr) names.push_back(item.key());
  }
  return names;
}

// The model of issue 42 in LibTorch: Sequential(TransformerEncoderLayer(64, 4, 160), Flatten,
// Linear(1024, 10)). Its Linears in named_modules() order: 0.self_attn.out_proj, 0.linear1,
// 0.linear2, 2 (LibTorch's MultiheadAttention registers out_proj before the layer's linear1).
torch::nn::Sequential encoder_model() {
  torch::manual_seed(0);
  return torch::nn::Sequential(
      torch::nn::TransformerEncoderLayer(
          torch::nn::TransformerEncoderLayerOptions(64, 4).dim_feedforward(160).dropout(0.0)),
      torch::nn::Flatten(), torch::nn::Linear(1024, 10));
}

// The recipe of `scaling` with the filter its source gets when parsed (default_module_filter):
// accelerate's AO filter for torchao scalings, TE's convert_model rules for the others.
recipes::Recipe source_recipe(recipes::Scaling scaling) {
  recipes::Recipe r = test::fp32_seq_recipe(scaling);
  r.module_filter = recipes::default_module_filter(scaling);
  return r;
}

// One training step's forward and backward in FP8: input [S 16, N 16, E 64] (LibTorch's
// TransformerEncoderLayer takes sequence first), flattened to [16, 1024] for the head.
void one_step(torch::nn::Sequential& model) {
  Fp8Autocast fp8(true);
  model->forward(test::normal({16, 16, 64}, 3)).square().mean().backward();
}

}  // namespace

TEST_CASE("convert_model: accelerate's dims-divisible-by-16 rule, without and with its quirk",
          "[linear][convert]") {
  auto backend = std::make_shared<const SimBackend>();
  recipes::ModuleFilter filter = dims_filter();
  {
    Net net;
    CHECK_FALSE(has_fp8_layers(net));
    const Names converted = convert_model(net, recipe_with(filter), backend);
    CHECK(converted == Names{"a0", "a2", "block.b0", "a3"});
    CHECK(fp8_names(net) == converted);
    CHECK(has_fp8_layers(net));
    CHECK(dynamic_cast<torch::nn::LinearImpl*>(net.named_children()["a1"].get()) != nullptr);
  }
  {
    // accelerate's bare `return`: after a1 the rest of root's children are not visited.
    filter.skip_later_siblings_after_indivisible = true;
    Net net;
    CHECK(convert_model(net, recipe_with(filter), backend) == Names{"a0"});
    // The quirk is per parent: inside `block` (visited before any indivisible Linear of its own)
    // nothing stops conversion; here block comes after a1, so it is not visited at all.
    CHECK(dynamic_cast<torch::nn::LinearImpl*>(net.named_modules("", false)["block.b0"].get()) !=
          nullptr);
  }
  {
    filter = dims_filter();
    filter.require_dims_divisible_by_16 = false;
    Net net;
    CHECK(convert_model(net, recipe_with(filter), backend) ==
          Names{"a0", "a1", "a2", "block.b0", "a3"});
  }
}

TEST_CASE("convert_model: first/last Linear, name globs and the user predicate",
          "[linear][convert]") {
  auto backend = std::make_shared<const SimBackend>();
  recipes::ModuleFilter filter = dims_filter();
  filter.skip_first_last_linear = true;
  {
    Net net;  // first Linear in named_modules() order: a0; last: a3
    CHECK(convert_model(net, recipe_with(filter), backend) == Names{"a2", "block.b0"});
  }
  filter = dims_filter();
  filter.skip_names = {"block.*", "a?x", "a2"};
  {
    Net net;
    CHECK(convert_model(net, recipe_with(filter), backend) == Names{"a0", "a3"});
  }
  filter = dims_filter();
  {
    Net net;
    ConvertOptions options;
    Names asked;
    options.predicate = [&](const std::string& name, const torch::nn::Module& module) {
      asked.push_back(name);
      const auto& linear = dynamic_cast<const torch::nn::LinearImpl&>(module);
      return linear.weight.size(0) == 32;  // out_features 32 only
    };
    CHECK(convert_model(net, recipe_with(filter), backend, options) == Names{"a0", "a2"});
    // The predicate sees only the Linears the earlier rules let through.
    CHECK(asked == Names{"a0", "a2", "block.b0", "a3"});
  }
}

TEST_CASE("convert_model: containers call the new modules, which hold the old parameters",
          "[linear][convert]") {
  auto backend = std::make_shared<const SimBackend>();
  // accelerate's TE smoke-test model: Linear(32,32), LayerNorm(32), Linear(32,16).
  torch::nn::Sequential sequential(torch::nn::Linear(32, 32),
                                   torch::nn::LayerNorm(torch::nn::LayerNormOptions({32})),
                                   torch::nn::Linear(32, 16));
  torch::nn::ModuleList list(torch::nn::Linear(16, 16));
  torch::nn::ModuleDict dict(
      std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>>{
          {"head", torch::nn::Linear(16, 16).ptr()}});
  auto root = std::make_shared<torch::nn::Module>("Root");
  root->register_module("body", sequential);
  root->register_module("list", list);
  root->register_module("dict", dict);

  const auto parameters_before = root->named_parameters();
  CHECK(convert_model(*root, recipe_with(dims_filter()), backend) ==
        Names{"body.0", "body.2", "list.0", "dict.head"});
  const auto parameters_after = root->named_parameters();
  REQUIRE(parameters_after.size() == parameters_before.size());
  for (const auto& p : parameters_before) {
    INFO(p.key());
    REQUIRE(parameters_after.contains(p.key()));
    CHECK(parameters_after[p.key()].unsafeGetTensorImpl() == p.value().unsafeGetTensorImpl());
  }

  // The containers' own entries are the new modules.
  CHECK(list[0]->as<Fp8LinearImpl>() != nullptr);
  CHECK(dict["head"]->as<Fp8LinearImpl>() != nullptr);
  const torch::Tensor x = test::normal({4, 32}, 1);
  torch::Tensor y;
  {
    Fp8Autocast fp8(true);
    y = sequential->forward(x);
  }
  CHECK(y.sizes() == torch::IntArrayRef({4, 16}));
  CHECK(sequential->ptr<Fp8LinearImpl>(0)->stats().fp8_gemms[0] == 1);
  CHECK(sequential->ptr<Fp8LinearImpl>(2)->stats().fp8_gemms[0] == 1);

  // Statistics are collected by name; reset clears them.
  const auto stats = collect_linear_stats(*root);
  REQUIRE(stats.size() == 4);
  CHECK(stats[0].name == "body.0");
  CHECK(stats[0].fp8);
  CHECK(stats[0].stats.operand(Operand::kInput, Gemm::kFprop).quantizations == 1);
  reset_linear_stats(*root);
  CHECK(collect_linear_stats(*root)[0].stats.fp8_gemms[0] == 0);

  // Converting again changes nothing.
  CHECK(convert_model(*root, recipe_with(dims_filter()), backend).empty());
}

TEST_CASE("convert_model_to_high_precision converts what convert_model skipped",
          "[linear][convert]") {
  auto backend = std::make_shared<const SimBackend>();
  Net net;
  CHECK(convert_model(net, recipe_with(dims_filter()), backend).size() == 4);
  CHECK(convert_model_to_high_precision(net, backend, HighPrecision::bf16) == Names{"a1"});
  auto* a1 = dynamic_cast<HighPrecisionLinearImpl*>(net.named_children()["a1"].get());
  REQUIRE(a1 != nullptr);
  CHECK(a1->high_precision() == HighPrecision::bf16);
  const auto stats = collect_linear_stats(net);
  CHECK(std::count_if(stats.begin(), stats.end(), [](const auto& s) { return s.fp8; }) == 4);
  CHECK(stats.size() == 5);
}

TEST_CASE("convert_model on TransformerEncoderLayer: each peer's Linears; those never called",
          "[linear][convert]") {
  auto backend = std::make_shared<const SimBackend>();
  {
    // accelerate's AO path (src/accelerate/utils/ao.py: find_first_last_linear_layers over
    // named_modules() with isinstance, filter_linear_layers): the first Linear is
    // 0.self_attn.out_proj, the last the head, so linear1 and linear2 are converted.
    auto model = encoder_model();
    CHECK(convert_model(*model, source_recipe(recipes::Scaling::tensorwise), backend) ==
          Names{"0.linear1", "0.linear2"});
    // LibTorch's TransformerEncoderLayer calls linear1 and linear2 through its member holders:
    // after a step neither converted Linear has run.
    one_step(model);
    CHECK(fp8_linears_not_run(*model) == Names{"0.linear1", "0.linear2"});
  }
  {
    // TE through accelerate (src/accelerate/utils/transformer_engine.py, convert_model:
    // isinstance over named_children, dims % 16 with a bare return): out_proj and both MLP
    // Linears; the head (out_features 10) is not divisible by 16.
    auto model = encoder_model();
    CHECK(convert_model(*model, source_recipe(recipes::Scaling::delayed), backend) ==
          Names{"0.self_attn.out_proj", "0.linear1", "0.linear2"});
  }
  {
    // torchao's own convert_to_float8_training without a filter (torchao/float8/
    // float8_linear_utils.py, swap_linear_layers: every isinstance nn.Linear): all four.
    recipes::Recipe recipe = source_recipe(recipes::Scaling::tensorwise);
    recipe.module_filter.skip_first_last_linear = false;
    recipe.module_filter.require_dims_divisible_by_16 = false;
    auto model = encoder_model();
    CHECK(convert_model(*model, recipe, backend) ==
          Names{"0.self_attn.out_proj", "0.linear1", "0.linear2", "2"});
    one_step(model);
    // MultiheadAttention reads out_proj's weight itself; the head, the Sequential's own entry,
    // runs in FP8 and is the only one not named.
    CHECK(fp8_linears_not_run(*model) == Names{"0.self_attn.out_proj", "0.linear1", "0.linear2"});
    CHECK(model->ptr<Fp8LinearImpl>(2)->stats().fp8_gemms[0] == 1);
    // Reset statistics: nothing has run since, every Fp8Linear is named.
    reset_linear_stats(*model);
    CHECK(fp8_linears_not_run(*model).size() == 4);
  }
}

}  // namespace fp8lab::experiments
