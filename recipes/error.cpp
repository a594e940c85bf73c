#include "recipes/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace fp8lab::recipes {
namespace {

std::string where(const Site& site) {
  return site.line > 0 ? fmt::format("{}:{}", site.file, site.line) : site.file;
}

std::string compose(const Site& site, const std::string& field, const std::string& value,
                    const std::string& problem, const std::string& accepted,
                    const std::string& suggestion) {
  std::string text = fmt::format("{}: {}: {}", where(site), field, problem);
  if (!value.empty()) text += fmt::format(" '{}'", value);
  if (!accepted.empty()) text += fmt::format("; accepted: {}", accepted);
  if (!suggestion.empty()) text += fmt::format(" (did you mean '{}'?)", suggestion);
  return text;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      const std::size_t next = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = row[j];
      row[j] = next;
    }
  }
  return row[b.size()];
}

}  // namespace

RecipeError::RecipeError(const Site& site, std::string field, std::string value,
                         std::string problem, std::string accepted, std::string suggestion)
    : std::runtime_error(compose(site, field, value, problem, accepted, suggestion)),
      site_(site),
      field_(std::move(field)),
      value_(std::move(value)),
      accepted_(std::move(accepted)) {}

std::string did_you_mean(std::string_view text, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = ~std::size_t{0};
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(text, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  const std::size_t allowed = std::max<std::size_t>(2, std::max(text.size(), best.size()) / 3);
  return best_distance <= allowed && best != text ? best : std::string{};
}

}  // namespace fp8lab::recipes
