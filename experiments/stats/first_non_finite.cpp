#include "experiments/stats/first_non_finite.hpp"

#include <sstream>

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

std::string number_or_bits(const nlohmann::json& value) {
  const auto v = value.find("value");
  const std::string bits = value.value("bits", std::string("?"));
  if (v == value.end() || !v->is_number()) {
    // NaN and Inf are null in JSON; the bits say which (0x7fc00000 is a quiet NaN).
    return "non-finite (" + bits + ")";
  }
  return format_number(v->get<double>(), "%.6g") + " (" + bits + ")";
}

std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

std::string first_non_finite_text(const RunRecord& record) {
  const auto it = record.other.find("first_non_finite");
  if (it == record.other.end() || !it->is_object()) return "";
  const auto& s = *it;
  std::ostringstream out;
  out << "first non-finite value: step " << s.value("step", nlohmann::json()).dump() << ", "
      << s.value("pass", std::string("?")) << ", layer `" << s.value("layer", std::string("?"))
      << "`, " << s.value("tensor", std::string("?")) << " read by "
      << s.value("gemm", std::string("?"))
      << (s.value("quantized", false) ? " (seen by its quantizer)" : " (high precision)") << ": "
      << s.value("nan_count", 0) << " NaN, " << s.value("inf_count", 0) << " Inf in "
      << s.value("shape", nlohmann::json::array()).dump() << ", first at index "
      << s.value("first_index", nlohmann::json()).dump() << "; values around it:";
  for (const auto& v : s.value("values", nlohmann::json::array())) {
    out << " [" << v.value("index", nlohmann::json()).dump() << "] " << number_or_bits(v);
  }
  const auto history = s.value("history", nlohmann::json::array());
  if (history.empty()) {
    out << "; no earlier quantization of this tensor";
  } else {
    out << "; amax / scale before:";
    for (const auto& h : history) {
      out << " step " << h.value("step", nlohmann::json()).dump() << " amax "
          << format_number(number(h, "amax")) << " scale " << format_number(number(h, "scale_min"));
      if (number(h, "scale_max") != number(h, "scale_min")) {
        out << ".." << format_number(number(h, "scale_max"));
      }
      out << ";";
    }
  }
  return out.str();
}

}  // namespace fp8lab::experiments
