// Workload options: every size and schedule knob of a workload, settable by name.
//
//   fp8lab run --workload llama-s --workload-set d_model=384 --workload-set layers=6
//   fp8lab run --workload llama-s:d_model=384,layers=6          # the same run
//   sweep file:  workloads: [gpt-small, llama-s:d_model=384, {llama-s: {d_model: 384}}]
//
// A workload spec is its registered name, optionally followed by ':' and key=value settings
// separated by ','. Its canonical text keeps only the settings that differ from the workload's
// defaults, values in canonical spelling (integers without leading zeros, reals in their
// shortest round-trip form, flags true/false), keys sorted. A spec without settings is the bare
// name, so the workloads that existed before options keep their run ids; different sizes get
// different ids (recipes::sweep_run_id hashes the spec; baseline ids spell it, run_ids.hpp).
// No LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fp8lab::experiments {

// One option of a workload: its key, default, what it means, and what it accepts.
struct WorkloadOption {
  enum class Kind : std::uint8_t { integer, real, choice, flag };
  std::string key;
  Kind kind = Kind::integer;
  std::string default_value;  // canonical text
  std::string meaning;
  std::string accepted;  // e.g. "an integer from 1 to 64"
  // The canonical text of a value, or nullopt when the value is not accepted.
  std::function<std::optional<std::string>(const std::string&)> canonical;
};

WorkloadOption integer_option(std::string key, std::int64_t default_value, std::int64_t minimum,
                              std::int64_t maximum, std::string meaning);
WorkloadOption real_option(std::string key, double default_value, double minimum, double maximum,
                           std::string meaning);
WorkloadOption choice_option(std::string key, std::string default_value,
                             std::vector<std::string> choices, std::string meaning);
WorkloadOption flag_option(std::string key, bool default_value, std::string meaning);

using WorkloadOptionTable = std::vector<WorkloadOption>;

// The value of every option of a table (defaults where not set), in canonical text.
class WorkloadOptionValues {
 public:
  WorkloadOptionValues() = default;
  WorkloadOptionValues(const WorkloadOptionTable& table, std::map<std::string, std::string> set);

  std::int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  bool flag(const std::string& key) const;
  const std::string& text(const std::string& key) const;

  // Every option: integers and reals as JSON numbers, flags as booleans, choices as strings.
  nlohmann::json to_json() const;
  const std::map<std::string, std::string>& changed() const { return changed_; }  // non-default

 private:
  const std::string& at(const std::string& key, WorkloadOption::Kind kind) const;
  std::map<std::string, std::pair<WorkloadOption::Kind, std::string>> values_;
  std::map<std::string, std::string> changed_;
};

struct WorkloadSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> settings;  // as written, in order
};

// "name" or "name:key=value,key=value". std::invalid_argument names the spec and what is
// expected when a setting has no '=' or an empty key, or the name is empty.
WorkloadSpec parse_workload_spec(const std::string& text);

// Checks `settings` against `table` and returns the values. std::invalid_argument names the
// workload, the option and what is accepted: an unknown key (listing the keys), a bad value, a
// key given twice.
WorkloadOptionValues resolve_workload_options(
    const std::string& name, const WorkloadOptionTable& table,
    const std::vector<std::pair<std::string, std::string>>& settings);

// The canonical spec text of a workload with these values: "name" or "name:k=v,...".
std::string canonical_workload_spec(const std::string& name, const WorkloadOptionValues& values);

// A spec as a piece of a file name (letters, digits, '.', '_', '-'): "llama-s:d_model=384,
// layers=6" -> "llama-s.d_model-384.layers-6"; a bare name is itself.
std::string workload_file_name(const std::string& canonical_spec);

// The spec of `name` with --workload-set style settings appended ("key=value" each).
std::string workload_spec_with(const std::string& spec, const std::vector<std::string>& settings);

// The lines `fp8lab run --help` and docs show for a table: "key (default D): meaning; accepted".
std::string describe_workload_options(const WorkloadOptionTable& table);

}  // namespace fp8lab::experiments
