// A workload's options declared once. Each field names its key, the member of the workload's
// options struct that it sets, what it accepts and what it means; the option table (with the
// defaults of a given options value) and the options that a spec's values give both come from the
// same list, so that no key is spelt twice. The options struct holds each default. No LibTorch.
//
//   OptionFields<MlpOptions> fields{integer_field("hidden", &MlpOptions::hidden_features, 1, 65536,
//                                                 "hidden width"), ...};
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/workloads/workload_options.hpp"

namespace fp8lab::experiments {

template <class Options>
struct OptionField {
  std::function<WorkloadOption(const Options& defaults)> option;
  std::function<void(Options& options, const WorkloadOptionValues& values)> read;
};
template <class Options>
using OptionFields = std::vector<OptionField<Options>>;

template <class Options>
OptionField<Options> integer_field(std::string key, std::int64_t Options::*member,
                                   std::int64_t minimum, std::int64_t maximum,
                                   std::string meaning) {
  return {
      [=](const Options& d) { return integer_option(key, d.*member, minimum, maximum, meaning); },
      [=](Options& o, const WorkloadOptionValues& v) { o.*member = v.integer(key); }};
}

template <class Options>
OptionField<Options> real_field(std::string key, double Options::*member, double minimum,
                                double maximum, std::string meaning) {
  return {[=](const Options& d) { return real_option(key, d.*member, minimum, maximum, meaning); },
          [=](Options& o, const WorkloadOptionValues& v) { o.*member = v.real(key); }};
}

template <class Options>
OptionField<Options> flag_field(std::string key, bool Options::*member, std::string meaning) {
  return {[=](const Options& d) { return flag_option(key, d.*member, meaning); },
          [=](Options& o, const WorkloadOptionValues& v) { o.*member = v.flag(key); }};
}

template <class Options>
OptionField<Options> choice_field(std::string key, std::string Options::*member,
                                  std::vector<std::string> choices, std::string meaning) {
  return {[=](const Options& d) { return choice_option(key, d.*member, choices, meaning); },
          [=](Options& o, const WorkloadOptionValues& v) { o.*member = v.text(key); }};
}

// Appends the fields of a nested struct (the schedule of a workload's options) to `fields`.
template <class Options, class Inner>
void append_fields(OptionFields<Options>& fields, Inner Options::*member,
                   const OptionFields<Inner>& inner) {
  for (const auto& field : inner) {
    fields.push_back(
        {[=](const Options& d) { return field.option(d.*member); },
         [=](Options& o, const WorkloadOptionValues& v) { field.read(o.*member, v); }});
  }
}

// The option table of `fields` with `defaults`' values as defaults, in the order of `fields`.
template <class Options>
WorkloadOptionTable option_table(const OptionFields<Options>& fields, const Options& defaults) {
  WorkloadOptionTable table;
  for (const auto& field : fields) table.push_back(field.option(defaults));
  return table;
}

// `defaults` with every field set from `values`.
template <class Options>
Options options_from(const OptionFields<Options>& fields, Options defaults,
                     const WorkloadOptionValues& values) {
  for (const auto& field : fields) field.read(defaults, values);
  return defaults;
}

// A preset: `base` with the settings of `spec` ("name:key=value,...", the text a user writes
// after --workload), and the spec's name. std::invalid_argument names a bad setting.
template <class Options>
std::pair<std::string, Options> preset(const OptionFields<Options>& fields, const Options& base,
                                       const std::string& spec) {
  const WorkloadSpec parsed = parse_workload_spec(spec);
  return {parsed.name, options_from(fields, base,
                                    resolve_workload_options(
                                        parsed.name, option_table(fields, base), parsed.settings))};
}

}  // namespace fp8lab::experiments
