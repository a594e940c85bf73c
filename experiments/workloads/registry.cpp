#include "experiments/workloads/registry.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

#include "experiments/workloads/gpt_workload.hpp"
#include "experiments/workloads/mlp_workload.hpp"
#include "experiments/workloads/user_model_example.hpp"

namespace fp8lab::experiments {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, WorkloadFactory> factories;
};

void register_builtin_workloads(std::map<std::string, WorkloadFactory>& factories) {
  factories["mlp"] = [] { return make_mlp_workload(MlpOptions{}); };
  factories["mlp-outliers"] = [] {
    MlpOptions o;
    o.name = "mlp-outliers";
    o.outlier_features = 4;
    o.outlier_scale = 100.0;
    return make_mlp_workload(o);
  };
  factories["gpt-tiny"] = [] { return make_gpt_workload(gpt_tiny_options()); };
  factories["gpt-small"] = [] { return make_gpt_workload(gpt_small_options()); };
  factories["user-example"] = [] { return make_user_model_example(); };
}

Registry& registry() {
  static Registry* instance = [] {
    auto* r = new Registry;  // never destroyed: workloads may be made during static teardown
    register_builtin_workloads(r->factories);
    return r;
  }();
  return *instance;
}

}  // namespace

void register_workload(const std::string& name, WorkloadFactory factory) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.factories[name] = std::move(factory);
}

std::unique_ptr<Workload> make_workload(const std::string& name) {
  WorkloadFactory factory;
  {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.factories.find(name);
    if (it == r.factories.end()) {
      std::string known;
      for (const auto& [n, f] : r.factories) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument("unknown workload '" + name + "' (known: " + known + ")");
    }
    factory = it->second;
  }
  return factory();
}

std::vector<std::string> workload_names() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [n, f] : r.factories) names.push_back(n);
  return names;
}

}  // namespace fp8lab::experiments
