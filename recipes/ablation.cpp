#include "recipes/ablation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fp8lab::recipes {
namespace {

namespace sc = sim::scaling;

constexpr sc::Gemm kGemms[] = {sc::Gemm::kFprop, sc::Gemm::kDgrad, sc::Gemm::kWgrad};

std::string keep_key(std::optional<sc::Gemm> gemm) {
  return gemm ? fmt::format("keep_high_precision.{}", sc::to_string(*gemm))
              : std::string("keep_high_precision.layers");
}

FieldSetting setting(const Ablation& a, std::string key, std::vector<std::string> patterns) {
  return {std::move(key), std::move(patterns), a.site};
}

}  // namespace

std::string AblationArm::label() const {
  if (kind == "all") return kind;
  return fmt::format("{} {}{}", kind, layer, gemm ? fmt::format(":{}", sc::to_string(*gemm)) : "");
}

std::string regex_escape(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::vector<AblationArm> ablation_arms(const Ablation& a) {
  if (a.layers.empty()) {
    throw RecipeError(a.site, "ablate.layers", "", "is empty: nothing to ablate",
                      "the Linears' fully qualified names");
  }
  std::set<std::string> seen;
  for (const auto& layer : a.layers) {
    if (!seen.insert(layer).second) {
      throw RecipeError(a.site, "ablate.layers", layer, "is given twice:", "distinct names");
    }
  }
  std::vector<AblationArm> arms;
  arms.push_back({"all", "", std::nullopt, {}});
  // Every layer but `layer`, as patterns.
  const auto others = [&](const std::string& layer) {
    std::vector<std::string> patterns;
    for (const auto& other : a.layers) {
      if (other != layer) patterns.push_back(regex_escape(other));
    }
    return patterns;
  };
  for (const auto& layer : a.layers) {
    const std::string pattern = regex_escape(layer);
    arms.push_back(
        {"all_but", layer, std::nullopt, {setting(a, keep_key(std::nullopt), {pattern})}});
    AblationArm only{"only", layer, std::nullopt, {}};
    if (const auto rest = others(layer); !rest.empty()) {
      only.settings.push_back(setting(a, keep_key(std::nullopt), rest));
    }
    arms.push_back(std::move(only));
  }
  if (!a.per_gemm) return arms;
  for (const auto& layer : a.layers) {
    const std::string pattern = regex_escape(layer);
    for (const sc::Gemm gemm : kGemms) {
      arms.push_back({"all_but", layer, gemm, {setting(a, keep_key(gemm), {pattern})}});
      AblationArm only{"only", layer, gemm, {}};
      if (const auto rest = others(layer); !rest.empty()) {
        only.settings.push_back(setting(a, keep_key(std::nullopt), rest));
      }
      for (const sc::Gemm other : kGemms) {
        if (other != gemm) only.settings.push_back(setting(a, keep_key(other), {pattern}));
      }
      arms.push_back(std::move(only));
    }
  }
  return arms;
}

}  // namespace fp8lab::recipes
