#include "experiments/stats/multiplicity.hpp"

#include <map>

namespace fp8lab::experiments {
namespace {

using Settings = std::map<std::string, std::string>;

bool stands_for(const RecipeRow& row, const Settings& settings) {
  for (const auto& combination : asked_combinations(row.first())) {
    if (combination == settings) return true;
  }
  return false;
}

bool matches(const PreRegisteredTest& h, const RecipeRow& row) {
  return h.kind == "verdict" && h.labels.size() == 1 &&
         stands_for(row, label_settings(h.labels[0]));
}

bool matches(const PreRegisteredTest& h, const Contrast& c) {
  if (h.kind != "contrast" || h.labels.size() != 2) return false;
  const auto a = label_settings(h.labels[0]), b = label_settings(h.labels[1]);
  return (stands_for(*c.worse, a) && stands_for(*c.better, b)) ||
         (stands_for(*c.worse, b) && stands_for(*c.better, a));
}

}  // namespace

Multiplicity apply_holm(std::vector<RecipeRow>& rows, std::vector<Contrast>& contrasts,
                        const std::vector<PreRegisteredTest>& hypotheses,
                        std::vector<LrSweep>& lr) {
  std::vector<NamedTest*> confirmatory, exploratory;
  std::vector<bool> tested(hypotheses.size(), false);
  auto place = [&](NamedTest& test, auto matches_item) {
    bool pre_registered = false;
    for (std::size_t i = 0; i < hypotheses.size(); ++i) {
      if (matches_item(hypotheses[i])) pre_registered = tested[i] = true;
    }
    test.family = pre_registered ? "confirmatory" : "exploratory";
    (pre_registered ? confirmatory : exploratory).push_back(&test);
  };
  for (auto& row : rows) {
    if (!row.paired.test) continue;
    place(*row.paired.test, [&](const PreRegisteredTest& h) { return matches(h, row); });
  }
  for (auto& c : contrasts) {
    if (!c.test) continue;
    place(*c.test, [&](const PreRegisteredTest& h) { return matches(h, c); });
  }
  for (auto& sweep : lr) {
    for (auto& arm : sweep.arms) {
      if (arm.edge_test) place(*arm.edge_test, [](const PreRegisteredTest&) { return false; });
    }
  }
  for (auto* family : {&confirmatory, &exploratory}) {
    std::vector<double> p;
    for (const auto* t : *family) p.push_back(t->p_raw);
    const auto adjusted = holm_adjusted(p);
    for (std::size_t i = 0; i < family->size(); ++i) {
      (*family)[i]->p_holm = adjusted[i];
      (*family)[i]->family_size = family->size();
    }
  }
  Multiplicity out{confirmatory.size(), exploratory.size(), {}};
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    if (tested[i]) continue;
    std::string text = hypotheses[i].kind;
    for (std::size_t j = 0; j < hypotheses[i].labels.size(); ++j) {
      text += (j == 0 ? " " : " vs ") + hypotheses[i].labels[j];
    }
    out.not_tested.push_back(text);
  }
  return out;
}

std::vector<PreRegisteredTest> pre_registered_tests(const nlohmann::json& hypotheses) {
  std::vector<PreRegisteredTest> out;
  if (!hypotheses.is_array()) return out;
  for (const auto& h : hypotheses) {
    if (!h.is_object()) continue;
    if (h.contains("verdict") && h["verdict"].is_string()) {
      out.push_back({"verdict", {h["verdict"].get<std::string>()}});
    } else if (h.contains("contrast") && h["contrast"].is_array() && h["contrast"].size() == 2 &&
               h["contrast"][0].is_string() && h["contrast"][1].is_string()) {
      out.push_back(
          {"contrast", {h["contrast"][0].get<std::string>(), h["contrast"][1].get<std::string>()}});
    }
  }
  return out;
}

}  // namespace fp8lab::experiments
