#include "experiments/linear/convert_model.hpp"

#include <torch/nn/module.h>
#include <torch/nn/modules/container/moduledict.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <stdexcept>

#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/high_precision_linear.hpp"
#include "recipes/role_rules.hpp"
#include "recipes/unmatched_keep.hpp"

namespace fp8lab::experiments {
namespace {

// fnmatch without character classes: '*' matches any run (also empty), '?' one character.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string qualified(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// A module to put in place of a Linear, also wrapped as its concrete type for Sequential (whose
// AnyModule entries remember the type they were made from: ptr<Fp8LinearImpl>() checks it).
struct Replacement {
  std::shared_ptr<torch::nn::Module> module;
  torch::nn::AnyModule any;
};

template <typename LinearType>
Replacement replacement_of(std::shared_ptr<LinearType> linear) {
  return {linear, torch::nn::AnyModule(linear)};
}

// Puts `replacement` where child `name` (the index-th child) of `parent` was, in the registry and
// in the container's own list when the parent is a container that calls its entries.
void replace_child(torch::nn::Module& parent, const std::string& name, std::size_t index,
                   const Replacement& replacement) {
  if (auto* sequential = dynamic_cast<torch::nn::SequentialImpl*>(&parent)) {
    *(sequential->begin() + static_cast<std::ptrdiff_t>(index)) = replacement.any;
  } else if (auto* list = dynamic_cast<torch::nn::ModuleListImpl*>(&parent)) {
    *(list->begin() + static_cast<std::ptrdiff_t>(index)) = replacement.module;
  } else if (auto* dict = dynamic_cast<torch::nn::ModuleDictImpl*>(&parent)) {
    dict->update(std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>>{
        {name, replacement.module}});
    return;  // ModuleDict::update re-registers the child itself
  }
  parent.replace_module(name, replacement.module);
}

// Makes the module for the Linear `linear` named `full_name` (its fully qualified name).
using MakeLinear =
    std::function<Replacement(const std::string& full_name, const torch::nn::LinearImpl& linear)>;

struct Visit {
  const recipes::ModuleFilter* filter = nullptr;  // null: convert every Linear
  const LinearPredicate* predicate = nullptr;
  std::string first_linear, last_linear;
  MakeLinear make;
  std::vector<std::string> converted;
};

bool should_convert(Visit& v, const std::string& full_name, const torch::nn::LinearImpl& linear) {
  if (v.filter == nullptr) return true;
  if (v.filter->skip_first_last_linear &&
      (full_name == v.first_linear || full_name == v.last_linear)) {
    return false;
  }
  for (const std::string& pattern : v.filter->skip_names) {
    if (glob_match(pattern, full_name)) return false;
  }
  return v.predicate == nullptr || !*v.predicate || (*v.predicate)(full_name, linear);
}

// Mirrors accelerate's recursive convert_model over named_children().
void convert_children(torch::nn::Module& parent, const std::string& prefix, Visit& v) {
  const auto children = parent.named_children();
  for (std::size_t index = 0; index < children.size(); ++index) {
    const std::string& name = children[index].key();
    const std::shared_ptr<torch::nn::Module>& child = children[index].value();
    const std::string full_name = qualified(prefix, name);
    if (dynamic_cast<BackendLinearImpl*>(child.get()) != nullptr) continue;
    const auto* linear = dynamic_cast<torch::nn::LinearImpl*>(child.get());
    if (linear == nullptr) {
      convert_children(*child, full_name, v);
      continue;
    }
    if (v.filter != nullptr && v.filter->require_dims_divisible_by_16 &&
        (linear->weight.size(0) % 16 != 0 || linear->weight.size(1) % 16 != 0)) {
      if (v.filter->skip_later_siblings_after_indivisible) return;  // accelerate's bare return
      continue;
    }
    if (!should_convert(v, full_name, *linear)) continue;
    if (linear->weight.scalar_type() != torch::kFloat) {
      throw std::invalid_argument("convert_model: Linear '" + full_name + "' has a " +
                                  std::string(c10::toString(linear->weight.scalar_type())) +
                                  " weight; fp8lab Linears take float32 parameters");
    }
    replace_child(parent, name, index, v.make(full_name, *linear));
    v.converted.push_back(full_name);
  }
}

// A keep_high_precision pattern that names no Linear keeps nothing: say so in the run's log, once
// per pattern and model per process (a run converts its model, shadow and what-if copies). Not an
// error: one sweep recipe meets several workloads, whose Linear names differ.
void warn_unmatched_keep_patterns(const recipes::Recipe& recipe,
                                  const std::vector<std::string>& linears) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  for (const std::string& pattern : recipes::unmatched_keep_patterns(recipe, linears)) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert(pattern + "\n" + linears.front()).second) continue;
    std::fprintf(stderr,
                 "fp8lab: warning: keep_high_precision pattern '%s' matches none of the model's "
                 "%zu Linears (the first is '%s'); it keeps nothing in high precision\n",
                 pattern.c_str(), linears.size(), linears.front().c_str());
  }
  for (const std::string& pattern : recipes::unmatched_role_patterns(recipe, linears)) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert("per_role\n" + pattern + "\n" + linears.front()).second) continue;
    std::fprintf(stderr,
                 "fp8lab: warning: per_role pattern '%s' matches none of the model's %zu Linears "
                 "(the first is '%s'); its rule changes nothing there\n",
                 pattern.c_str(), linears.size(), linears.front().c_str());
  }
}

}  // namespace

std::vector<std::string> convert_model(torch::nn::Module& model, const recipes::Recipe& recipe,
                                       std::shared_ptr<const LinearBackend> backend,
                                       const ConvertOptions& options) {
  if (!backend) throw std::invalid_argument("convert_model: no backend given");
  Visit v;
  v.filter = &recipe.module_filter;
  v.predicate = &options.predicate;
  std::vector<std::string> linears;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    if (dynamic_cast<torch::nn::LinearImpl*>(item.value().get()) == nullptr) continue;
    linears.push_back(item.key());
  }
  if (!linears.empty()) {
    v.first_linear = linears.front();
    v.last_linear = linears.back();
    warn_unmatched_keep_patterns(recipe, linears);
  }
  v.make = [&](const std::string& full_name, const torch::nn::LinearImpl& linear) {
    return replacement_of(std::make_shared<Fp8LinearImpl>(linear, recipe, backend,
                                                          options.high_precision, full_name));
  };
  convert_children(model, "", v);
  return v.converted;
}

std::vector<std::string> convert_model_to_high_precision(
    torch::nn::Module& model, std::shared_ptr<const LinearBackend> backend,
    HighPrecision high_precision) {
  if (!backend) throw std::invalid_argument("convert_model_to_high_precision: no backend given");
  Visit v;
  v.make = [&](const std::string&, const torch::nn::LinearImpl& linear) {
    return replacement_of(
        std::make_shared<HighPrecisionLinearImpl>(linear, backend, high_precision));
  };
  convert_children(model, "", v);
  return v.converted;
}

bool has_fp8_layers(const torch::nn::Module& model) {
  if (dynamic_cast<const Fp8LinearImpl*>(&model) != nullptr) return true;
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (dynamic_cast<const Fp8LinearImpl*>(module.get()) != nullptr) return true;
  }
  return false;
}

std::vector<std::string> fp8_linears_not_run(const torch::nn::Module& model) {
  std::vector<std::string> names;
  const auto fprop = static_cast<std::size_t>(Gemm::kFprop);
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    const auto* linear = dynamic_cast<const Fp8LinearImpl*>(item.value().get());
    if (linear == nullptr) continue;
    const LinearStats& stats = linear->stats();
    if (stats.fp8_gemms[fprop] + stats.high_precision_gemms[fprop] == 0) {
      names.push_back(item.key());
    }
  }
  return names;
}

std::vector<NamedLinearStats> collect_linear_stats(const torch::nn::Module& model) {
  std::vector<NamedLinearStats> result;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    if (const auto* linear = dynamic_cast<const BackendLinearImpl*>(item.value().get())) {
      result.push_back(
          {item.key(), dynamic_cast<const Fp8LinearImpl*>(linear) != nullptr, linear->stats()});
    }
  }
  return result;
}

void reset_linear_stats(torch::nn::Module& model) {
  if (auto* self = dynamic_cast<BackendLinearImpl*>(&model)) self->reset_stats();
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* linear = dynamic_cast<BackendLinearImpl*>(module.get())) linear->reset_stats();
  }
}

void set_measure_operands(torch::nn::Module& model, bool on) {
  if (auto* self = dynamic_cast<BackendLinearImpl*>(&model)) self->set_measure_operands(on);
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* linear = dynamic_cast<BackendLinearImpl*>(module.get())) {
      linear->set_measure_operands(on);
    }
  }
}

}  // namespace fp8lab::experiments
