#include "experiments/stats/run_provenance.hpp"

namespace fp8lab::experiments {
namespace {

std::string value_text(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null()) return "?";
  return object[key].is_string() ? object[key].get<std::string>() : object[key].dump();
}

// "amax_compute_algo most_recent -> max (TE's recipe has no most_recent)" for each change.
std::string changes_text(const nlohmann::json& changes, bool with_why) {
  std::string text;
  if (!changes.is_array()) return text;
  for (const auto& c : changes) {
    text += (text.empty() ? "" : "; ") + value_text(c, "field") + " " + value_text(c, "asked") +
            " -> " + value_text(c, "runs");
    if (with_why && c.is_object() && c.contains("why") && c["why"].is_string()) {
      text += " (" + c["why"].get<std::string>() + ")";
    }
  }
  return text;
}

// "accelerate + Transformer Engine" -> "TE": the library that decides, in two or three letters.
std::string short_runner(const std::string& runner) {
  if (runner.find("Transformer Engine") != std::string::npos) return "TE";
  if (runner == "TE" || runner.ends_with(" TE")) return "TE";
  if (runner.find("torchao") != std::string::npos) return "torchao";
  return runner;
}

}  // namespace

std::string runs_as_text(const RunRecord& record) {
  if (record.kind == "baseline") return "baseline";
  if (!record.runs_as.has_value()) return "not recorded";
  const auto& mode = *record.runs_as;
  if (mode == "asked") return "as asked";
  if (mode != "upstream") return "unknown runs_as '" + mode + "'";
  const auto changed = changes_text(record.other.value("changed_fields", nlohmann::json()), false);
  return changed.empty() ? "upstream" : "upstream (" + changed + ")";
}

UpstreamMark upstream_mark(const RunRecord& record) {
  if (record.kind == "baseline") return {false, "-"};
  if (!record.other.contains("upstream")) return {false, "not recorded"};
  const auto& upstream = record.other["upstream"];
  if (!upstream.is_object()) return {false, "-"};
  const auto runner = upstream.contains("runner") && upstream["runner"].is_string()
                          ? upstream["runner"].get<std::string>()
                          : std::string("the peer");
  UpstreamMark mark;
  if (upstream.contains("refusal") && upstream["refusal"].is_string()) {
    mark.differs = true;
    // fp8lab's refusals already name the runner ("accelerate + TE refuses these settings (..)").
    const auto refusal = upstream["refusal"].get<std::string>();
    mark.text = refusal.rfind(runner, 0) == 0 ? refusal : runner + " refuses: " + refusal;
  } else if (upstream.contains("runnable") && upstream["runnable"].is_boolean() &&
             !upstream["runnable"].get<bool>()) {
    mark.differs = true;
    mark.text = runner + " cannot run it";
  }
  const auto changes = changes_text(upstream.value("would_change", nlohmann::json()), true);
  if (!changes.empty()) {
    mark.differs = true;
    mark.text += (mark.text.empty() ? "" : "; ") + runner + " would change: " + changes;
  }
  if (mark.text.empty()) mark.text = runner + " runs it the same";
  return mark;
}

std::string short_upstream_mark(const RunRecord& record) {
  if (record.kind != "fp8") return "-";
  if (!record.other.contains("upstream")) return "not recorded";
  const auto& upstream = record.other["upstream"];
  if (!upstream.is_object()) return "-";
  const auto runner = short_runner(value_text(upstream, "runner"));
  if (upstream.value("trains_fp8", true) == false) return runner + " trains no FP8";
  // The refused values (quirks whose `runs` is empty): "TE refuses (E5M2)".
  std::string refused;
  if (upstream.contains("refusal") && upstream["refusal"].is_string()) {
    for (const auto& q : upstream.value("quirks", nlohmann::json::array())) {
      if (!q.is_object() || value_text(q, "runs") != "") continue;
      refused += (refused.empty() ? "" : ", ") + value_text(q, "asked");
    }
    return runner + " refuses" + (refused.empty() ? "" : " (" + refused + ")");
  }
  if (upstream.contains("runnable") && upstream["runnable"].is_boolean() &&
      !upstream["runnable"].get<bool>()) {
    return runner + " cannot run it";
  }
  const auto& changes = upstream.value("would_change", nlohmann::json::array());
  const std::size_t n = changes.is_array() ? changes.size() : 0;
  if (n == 0) return runner + ": same";
  return runner + " changes " + std::to_string(n) + (n == 1 ? " field" : " fields");
}

}  // namespace fp8lab::experiments
