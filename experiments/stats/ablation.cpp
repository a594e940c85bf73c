#include "experiments/stats/ablation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "experiments/stats/chaos_floor.hpp"
#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {
namespace {

using ArmKey = std::tuple<std::string, std::string, std::string>;  // kind, layer, gemm
using SeedLosses = std::map<std::int64_t, double>;                 // seed -> final eval loss

struct Group {
  AblationTable table;
  SeedLosses baseline;
  std::map<ArmKey, SeedLosses> arms;
};

std::optional<MeanInterval> interval(const std::vector<double>& values) {
  return t_interval(std::span<const double>(values.data(), values.size()));
}

std::optional<double> share_of(const std::optional<MeanInterval>& part,
                               const std::optional<MeanInterval>& gap) {
  if (!part || !gap || gap->mean == 0.0) return std::nullopt;
  return part->mean / gap->mean;
}

AblationRow row_of(const Group& g, const std::string& layer, const std::string& gemm,
                   std::vector<std::string>& notes) {
  AblationRow row{layer, gemm, {}, {}, {}, {}, 0.0};
  const auto find = [&](const char* kind) -> const SeedLosses* {
    const auto it = g.arms.find({kind, layer, gemm});
    return it == g.arms.end() ? nullptr : &it->second;
  };
  const auto all_it = g.arms.find({"all", "", "all"});
  const SeedLosses* all = all_it == g.arms.end() ? nullptr : &all_it->second;
  std::vector<double> removed, alone;
  if (const SeedLosses* but = find("all_but"); but && all) {
    for (const auto& [seed, x] : *but) {
      const auto a = all->find(seed);
      const auto b = g.baseline.find(seed);
      if (a == all->end() || b == g.baseline.end()) continue;
      removed.push_back((a->second - x) / b->second);
    }
  }
  if (const SeedLosses* only = find("only")) {
    for (const auto& [seed, o] : *only) {
      const auto b = g.baseline.find(seed);
      if (b != g.baseline.end()) alone.push_back((o - b->second) / b->second);
    }
  }
  row.removed = interval(removed);
  row.alone = interval(alone);
  row.share_removed = share_of(row.removed, g.table.gap);
  row.share_alone = share_of(row.alone, g.table.gap);
  if (row.share_removed && row.share_alone) {
    row.share = (*row.share_removed + *row.share_alone) / 2.0;
  } else {
    row.share = row.share_removed.value_or(row.share_alone.value_or(0.0));
  }
  if (removed.size() < kMinPairedSeeds || alone.size() < kMinPairedSeeds) {
    notes.push_back(layer + (gemm == "all" ? "" : ":" + gemm) + ": " +
                    std::to_string(std::min(removed.size(), alone.size())) +
                    " paired seeds (fewer than " + std::to_string(kMinPairedSeeds) + ")");
  }
  return row;
}

void rank(std::vector<AblationRow>& rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const AblationRow& a, const AblationRow& b) { return a.share > b.share; });
}

std::string share_text(const std::optional<double>& share) {
  return share ? format_percent(*share) : "-";
}
std::string interval_text(const std::optional<MeanInterval>& i) {
  return i ? describe_interval(*i) : "-";
}

}  // namespace

std::vector<AblationTable> ablation_tables(const std::vector<RunRecord>& records) {
  std::vector<std::pair<std::string, Group>> groups;  // (workload + base) -> group, in order
  const auto group_of = [&](const std::string& workload, const std::string& base) -> Group& {
    const std::string key = workload + "\n" + base;
    for (auto& [k, g] : groups) {
      if (k == key) return g;
    }
    groups.emplace_back(key, Group{});
    groups.back().second.table.workload = workload;
    groups.back().second.table.base_recipe = base;
    return groups.back().second;
  };
  const ChaosFloors floors(records);
  for (const auto& r : records) {
    const auto it = r.other.find("ablation");  // provenance, kept as the record has it
    if (it == r.other.end() || !it->is_object()) continue;
    Group& g = group_of(r.workload, it->value("base_recipe", std::string()));
    if (const ChaosFloor* floor = floors.of(r); floor && g.table.chaos_floor.empty()) {
      g.table.chaos_floor = floor->describe();
    }
    const auto seed = r.seed.value_or(0);
    const auto loss = r.final->eval_loss.get();
    if (const auto b = r.final->baseline_eval_loss.get()) g.baseline[seed] = *b;
    if (!loss || !std::isfinite(*loss)) {
      g.table.notes.push_back("run " + r.run_id + " (seed " + std::to_string(seed) +
                              ") has no final eval loss (" + r.status.value_or("?") +
                              "): left out");
      continue;
    }
    for (const auto& arm : (*it)["arms"]) {
      const ArmKey key{arm.value("kind", std::string()), arm.value("layer", std::string()),
                       arm.value("gemm", std::string("all"))};
      g.arms[key][seed] = *loss;
      if (std::get<0>(key) == "all") g.table.recipe_label = r.recipe_label.value_or("");
    }
  }
  std::vector<AblationTable> tables;
  for (auto& [key, g] : groups) {
    std::vector<double> gap;
    if (const auto all = g.arms.find({"all", "", "all"}); all != g.arms.end()) {
      for (const auto& [seed, a] : all->second) {
        if (const auto b = g.baseline.find(seed); b != g.baseline.end()) {
          gap.push_back((a - b->second) / b->second);
        }
      }
    }
    g.table.gap = interval(gap);
    std::set<std::pair<std::string, std::string>> targets;  // (layer, gemm)
    for (const auto& [arm, losses] : g.arms) {
      if (std::get<0>(arm) != "all") targets.insert({std::get<1>(arm), std::get<2>(arm)});
    }
    for (const auto& [layer, gemm] : targets) {
      auto row = row_of(g, layer, gemm, g.table.notes);
      (gemm == "all" ? g.table.layers : g.table.gemms).push_back(std::move(row));
    }
    rank(g.table.layers);
    rank(g.table.gemms);
    tables.push_back(std::move(g.table));
  }
  return tables;
}

std::string ablation_markdown(const std::vector<AblationTable>& tables) {
  if (tables.empty()) return "";
  std::ostringstream md;
  md << "\n## Layer ablation: which Linears carry the loss gap\n\n"
     << "Paired over seeds against each seed's baseline (final eval loss, relative): gap = "
        "(all FP8 - baseline); removed = (all FP8 - all FP8 but this one in high precision); "
        "alone = (only this one in FP8 - baseline); share = removed or alone over the gap, their "
        "mean ranks the rows. 95% t-intervals.\n";
  for (const auto& t : tables) {
    md << "\n### " << t.workload << ": " << (t.recipe_label.empty() ? "(recipe)" : t.recipe_label)
       << "\n\ngap: "
       << (t.gap ? describe_interval(*t.gap)
                 : "not measured (no all-FP8 run with "
                   "a baseline)")
       << "; chaos floor (null runs): "
       << (t.chaos_floor.empty() ? "not measured (null_runs: true measures it)" : t.chaos_floor)
       << "\n\n";
    for (const auto* rows : {&t.layers, &t.gemms}) {
      if (rows->empty()) continue;
      md << "| rank | layer | GEMM | share | removed share | alone share | removed (paired) | "
            "alone (paired) |\n|---|---|---|---|---|---|---|---|\n";
      for (std::size_t i = 0; i < rows->size(); ++i) {
        const auto& r = (*rows)[i];
        md << "| " << i + 1 << " | `" << r.layer << "` | " << r.gemm << " | "
           << format_percent(r.share) << " | " << share_text(r.share_removed) << " | "
           << share_text(r.share_alone) << " | " << interval_text(r.removed) << " | "
           << interval_text(r.alone) << " |\n";
      }
      md << "\n";
    }
    for (const auto& note : t.notes) md << "- " << note << "\n";
  }
  return md.str();
}

}  // namespace fp8lab::experiments
