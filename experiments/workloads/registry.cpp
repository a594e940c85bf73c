#include "experiments/workloads/registry.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

#include "experiments/workloads/gpt_workload.hpp"
#include "experiments/workloads/llama_workload.hpp"
#include "experiments/workloads/mlp_workload.hpp"
#include "experiments/workloads/residual_mlp_workload.hpp"
#include "experiments/workloads/user_model_example.hpp"

namespace fp8lab::experiments {
namespace {

struct Entry {
  WorkloadOptionTable options;
  OptionedWorkloadFactory factory;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, Entry> entries;
};

void register_builtin_workloads(std::map<std::string, Entry>& entries) {
  for (const auto& kind :
       {mlp_workloads(), gpt_workloads(), llama_workloads(), residual_mlp_workloads()}) {
    for (const auto& preset : kind) entries[preset.name] = {preset.options, preset.make};
  }
  entries["user-example"] = {{}, [](const auto&) { return make_user_model_example(); }};
}

Registry& registry() {
  static Registry* instance = [] {
    auto* r = new Registry;  // never destroyed: workloads may be made during static teardown
    register_builtin_workloads(r->entries);
    return r;
  }();
  return *instance;
}

Entry entry_of(const std::string& name) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  const auto it = r.entries.find(name);
  if (it == r.entries.end()) {
    std::string known;
    for (const auto& [n, e] : r.entries) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown workload '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

}  // namespace

void register_workload(const std::string& name, WorkloadFactory factory) {
  register_workload(
      name, {}, [factory = std::move(factory)](const WorkloadOptionValues&) { return factory(); });
}

void register_workload(const std::string& name, WorkloadOptionTable options,
                       OptionedWorkloadFactory factory) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.entries[name] = {std::move(options), std::move(factory)};
}

ResolvedWorkload resolve_workload(const std::string& spec) {
  const auto parsed = parse_workload_spec(spec);
  const auto entry = entry_of(parsed.name);
  return {parsed.name, resolve_workload_options(parsed.name, entry.options, parsed.settings)};
}

std::string canonical_workload(const std::string& spec) {
  const auto resolved = resolve_workload(spec);
  return canonical_workload_spec(resolved.name, resolved.values);
}

void canonicalize_workloads(std::vector<std::string>& specs, const std::string& file) {
  for (auto& spec : specs) {
    try {
      spec = canonical_workload(spec);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(file + ": workloads: " + e.what());
    }
  }
}

WorkloadOptionTable workload_option_table(const std::string& name) {
  return entry_of(name).options;
}

std::unique_ptr<Workload> make_workload(const std::string& spec) {
  const auto resolved = resolve_workload(spec);
  return entry_of(resolved.name).factory(resolved.values);
}

std::vector<std::string> workload_names() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, e] : r.entries) names.push_back(n);
  return names;
}

}  // namespace fp8lab::experiments
