#include "experiments/render/contrasts_csv.hpp"

#include <sstream>

#include "experiments/render/test_columns.hpp"
#include "experiments/stats/report_facts.hpp"

namespace fp8lab::experiments {

std::string render_contrasts_csv(const ReportInput& input) {
  return render_contrasts_csv(input, ReportFacts(input));
}

std::string render_contrasts_csv(const ReportInput& input, const ReportFacts& facts) {
  std::ostringstream csv;
  csv << "family_key,workload,field,a,b,a_value,b_value,a_runs,b_runs,seeds," << kTestColumns
      << ",reason,practical_band,alpha,a_unstable_runs,b_unstable_runs,unstable_p_fisher\n";
  for (const auto& c : facts.contrasts) {
    // Space-separated lists (appended, not "sep" + text: GCC 12's -Wrestrict misfires on that).
    auto join = [](std::string& list, const std::string& item) {
      if (!list.empty()) list += ' ';
      list += item;
    };
    std::string a_runs, b_runs, seeds;
    for (const auto* r : c.worse->runs) join(a_runs, r->run_id);
    for (const auto* r : c.better->runs) join(b_runs, r->run_id);
    for (const auto s : c.seeds) join(seeds, std::to_string(s));
    const std::size_t unstable = c.worse->unstable_runs + c.better->unstable_runs;
    const std::size_t runs = c.worse->runs.size() + c.better->runs.size();
    csv << csv_field(c.worse->family) << ',' << csv_field(c.worse->first().workload) << ','
        << csv_field(c.field) << ',' << csv_field(run_label(c.worse->first())) << ','
        << csv_field(run_label(c.better->first())) << ',' << csv_field(c.worse_value) << ','
        << csv_field(c.better_value) << ',' << csv_field(a_runs) << ',' << csv_field(b_runs) << ','
        << csv_field(seeds) << ','
        << test_columns(c.test ? &*c.test : nullptr, c.verdict, unstable, runs) << ','
        << csv_field(c.verdict_text()) << ',' << csv_number(input.practical_band) << ','
        << csv_number(input.alpha) << ',';
    const auto* counts = facts.instability.of(c);
    csv << (counts ? std::to_string(counts->a.unstable) : std::string()) << ','
        << (counts ? std::to_string(counts->b.unstable) : std::string()) << ','
        << csv_number(counts ? counts->p_two_sided : std::nullopt) << '\n';
  }
  return csv.str();
}

}  // namespace fp8lab::experiments
