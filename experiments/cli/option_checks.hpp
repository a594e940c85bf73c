// CLI11 checks for fp8lab's options whose messages name the flag, the value and what is accepted.
// CLI11's own say "--jobs: Value 0 not in range 0.000000 to 1797...(300 digits)" or "Could not
// convert: --seed = text", and an int64 option silently takes 0 for "--steps 0" where the
// command then treats 0 as "not given". CLI11 prefixes each message with the flag's name.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

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

}  // namespace fp8lab::experiments::cli
