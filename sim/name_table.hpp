// One spelling per value of an enum, in a table that both directions read: to_string (and a
// recipe's name) looks a value up, a parser looks a word up, and an error lists every word, so
// the name printed and the name accepted cannot drift apart. Header-only and constexpr, so that
// gpu/ may include it with sim/settings.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fp8lab::sim {

template <class Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, const char*>, N>;

// "?" for a value the table lacks (a corrupt enum), never a crash in an error message.
template <class Enum, std::size_t N>
constexpr const char* name_in(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [e, n] : table) {
    if (e == value) return n;
  }
  return "?";
}

template <class Enum, std::size_t N>
constexpr std::optional<Enum> value_in(const NameTable<Enum, N>& table, std::string_view text) {
  for (const auto& [e, n] : table) {
    if (text == n) return e;
  }
  return std::nullopt;
}

// "a, b, c": the accepted words of an error message.
template <class Enum, std::size_t N>
std::string joined_names(const NameTable<Enum, N>& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    out += entry.second;
  }
  return out;
}

}  // namespace fp8lab::sim
