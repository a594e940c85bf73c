// CLI11 checks for fp8lab's options whose messages name the flag, the value and what is accepted.
// CLI11's own say "--jobs: Value 0 not in range 0.000000 to 1797...(300 digits)" or "Could not
// convert: --seed = text", and an int64 option silently takes 0 for "--steps 0" where the
// command then treats 0 as "not given". CLI11 prefixes each message with the flag's name.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fp8lab::experiments::cli {

// A whole number that fits int64 and is >= minimum, e.g. --steps, --jobs (minimum 1).
CLI::Validator whole_number_at_least(std::int64_t minimum);
// A whole number from minimum to maximum (--jobs: an int).
CLI::Validator whole_number_between(std::int64_t minimum, std::int64_t maximum,
                                    const std::string& why);
// Any whole number that fits int64 (--seed).
CLI::Validator whole_number();
// A registered workload (experiments/workloads/registry.hpp), checked before anything runs: an
// unknown name would otherwise become a "failed" run record in --out.
CLI::Validator workload_name();
// --out: absent (created later) or a directory; not an existing file, not empty.
CLI::Validator output_directory();

// A list-valued option (--what-if a,b, --heatmap-axes A,B, literature --k 512,1024, the repeatable
// --set k=v): one value per occurrence, never several words, and a value that is an option (CLI11
// 2.1 gives "--what-if --out M" the value "--out") is refused with the option named. Comma lists
// are split with list_items, not with CLI11's delimiter: CLI11 2.1 takes the next option as the
// value when a value splits into nothing ("--what-if ,,, --out M" gave --what-if the recipe
// "--out"). Returns `option`.
CLI::Option* list_option(CLI::Option* option);
// The comma-separated items of a list option's values, in order; an empty item (",,", a
// leading or trailing comma) throws CLI::ValidationError (exit 2) naming the option, the value and
// `accepted` (e.g. "NAME[,NAME...]").
std::vector<std::string> list_items(const std::vector<std::string>& values, const std::string& flag,
                                    const std::string& accepted);

// An option or flag that means something only with `flag`: its help starts "with --flag: " and
// CLI11 refuses it without the flag (exit 2), so that the words and the check are one decision.
template <class T>
CLI::Option* add_option_with(CLI::App& command, CLI::Option* flag, const std::string& name,
                             T& value, const std::string& help) {
  return command.add_option(name, value, "with " + flag->get_name() + ": " + help)->needs(flag);
}
inline CLI::Option* add_flag_with(CLI::App& command, CLI::Option* flag, const std::string& name,
                                  bool& value, const std::string& help) {
  return command.add_flag(name, value, "with " + flag->get_name() + ": " + help)->needs(flag);
}

}  // namespace fp8lab::experiments::cli
