#include "experiments/render/test_columns.hpp"

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

const char* const kTestColumns =
    "estimate,ci_low,ci_high,ci_level,p_raw,p_holm,family_size,family,test,verdict,mde80,"
    "seeds_for_80,unstable_runs,runs";

std::string test_columns(const NamedTest* t, const std::string& verdict, std::size_t unstable_runs,
                         std::size_t runs) {
  std::string out;
  if (t != nullptr) {
    out = csv_number(t->estimate) + ',' + csv_number(t->ci_low) + ',' + csv_number(t->ci_high) +
          ',' + csv_number(t->ci_level) + ',' + csv_number(t->p_raw) + ',' + csv_number(t->p_holm) +
          ',' + std::to_string(t->family_size) + ',' + t->family + ',' + csv_field(t->test) + ',';
  } else {
    out = ",,,,,,,,,";
  }
  out += csv_field(verdict) + ',';
  if (t != nullptr) {
    out += csv_number(t->mde80) + ',' +
           (t->seeds_for_80 ? std::to_string(*t->seeds_for_80) : std::string()) + ',';
  } else {
    out += ",,";
  }
  return out + std::to_string(unstable_runs) + ',' + std::to_string(runs);
}

}  // namespace fp8lab::experiments
