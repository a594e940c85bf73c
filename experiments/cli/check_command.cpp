// fp8lab check: every GPU kernel against sim/ on random and adversarial tensors (docs/numerics.md §4),
// printed as a table (kernel, cases, values, mismatches, max ULP). Exit status: 0 when every
// deterministic kernel matched bit for bit, 1 on any mismatch, 77 when there is no usable CUDA
// device (or fp8lab was built without CUDA), with the reason printed. Peers (cuBLASLt) are
// reported with their distance from the models and never fail the command: cuBLASLt directly,
// and torch._scaled_mm through LibTorch.
//
// --json FILE also writes the outcome as JSON (schema "fp8lab.check", notebooks/README.md) for
// notebooks/gpu_vs_reference.ipynb, whatever the outcome: a run without a GPU is recorded as
// "skipped" with its reason, so that the notebook can say why it has no rows.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "experiments/cli/commands.hpp"
#include "experiments/results/results_store.hpp"

#if FP8LAB_HAVE_CUDA
#include "experiments/gpu_check/checks.hpp"
#include "experiments/gpu_check/torch_checks.hpp"
#include "gpu/device.hpp"
#endif

namespace fp8lab::experiments::cli {
namespace {

constexpr int kSkipped = 77;  // CTest's skip code, used by every gpu test too

// What --json writes: {"schema": "fp8lab.check", "schema_version": 1, "status": "passed" |
// "failed" | "skipped" | "error", "reason": text, "device": {...} or null, "kernels": [...]}.
nlohmann::json check_document(const char* status, const std::string& reason) {
  return {{"schema", "fp8lab.check"}, {"schema_version", 1}, {"status", status},
          {"reason", reason},         {"device", nullptr},   {"kernels", nlohmann::json::array()}};
}

#if FP8LAB_HAVE_CUDA
nlohmann::json kernel_json(const gpu_check::CheckResult& r) {
  return {{"kernel", r.kernel},         {"cases", r.cases},
          {"values", r.compared},       {"nonzero", r.nonzero},
          {"mismatches", r.mismatches}, {"max_ulp", r.max_ulp},
          {"mean_ulp", r.mean_ulp()},   {"peer", r.peer},
          {"passed", r.passed()},       {"ulp_bit_width_counts", r.ulp_bit_width_counts},
          {"first_mismatches", r.first}};
}

int run_check(bool exhaustive, bool peers, nlohmann::json& document) {
  const gpu::DeviceInfo device = gpu::query_device();
  document["device"] = {{"name", device.name},
                        {"compute_capability", device.compute_capability},
                        {"driver_version", device.driver_version},
                        {"runtime_version", device.runtime_version}};
  if (!device.available) {
    std::printf("fp8lab check: nothing checked: %s (driver %s, runtime %s)\n",
                device.reason.c_str(), device.driver_version.c_str(),
                device.runtime_version.c_str());
    document["reason"] = device.reason;
    return kSkipped;
  }
  std::printf("fp8lab check on %s (sm_%d), driver %s, runtime %s\n", device.name.c_str(),
              device.compute_capability, device.driver_version.c_str(),
              device.runtime_version.c_str());
  std::vector<gpu_check::CheckResult> results;
  auto add = [&](std::vector<gpu_check::CheckResult> more) {
    for (auto& r : more) results.push_back(std::move(r));
  };
  add(gpu_check::check_quantize_kernels());
  add(gpu_check::check_scaling_quantizers());
  add(gpu_check::check_fp4_kernels());
  add(gpu_check::check_gemm_models());
  if (exhaustive) add(gpu_check::check_casts_all_inputs(false));
  if (peers) {
    add(gpu_check::check_cublaslt_peer());
    add(gpu_check::check_torch_scaled_mm_peer());
  }

  std::printf("\n%-58s %7s %12s %11s %9s %10s  %s\n", "kernel", "cases", "values", "mismatches",
              "max ulp", "mean ulp", "status");
  int failed = 0;
  for (const auto& r : results) {
    const char* status = r.peer ? "peer" : (r.passed() ? "ok" : "FAIL");
    if (!r.passed()) ++failed;
    std::printf("%-58s %7llu %12llu %11llu %9llu %10.3g  %s\n", r.kernel.c_str(),
                static_cast<unsigned long long>(r.cases),
                static_cast<unsigned long long>(r.compared),
                static_cast<unsigned long long>(r.mismatches),
                static_cast<unsigned long long>(r.max_ulp), r.mean_ulp(), status);
  }
  for (const auto& r : results) {
    if (r.first.empty()) continue;
    std::printf("\n%s\n", r.report().c_str());
  }
  std::printf("\n%zu kernels checked, %d failed%s\n", results.size(), failed,
              failed == 0 ? ": every deterministic kernel equals sim/ bit for bit" : "");
  for (const auto& r : results) document["kernels"].push_back(kernel_json(r));
  document["status"] = failed == 0 ? "passed" : "failed";
  return failed == 0 ? 0 : 1;
}
#endif

}  // namespace

void add_check_command(CLI::App& app) {
  auto* command = app.add_subcommand("check", "Run every GPU kernel against sim/ on random and "
                                              "adversarial tensors (exit 77 without a GPU)");
  static bool no_exhaustive = false, no_peers = false;
  command->add_flag("--no-exhaustive", no_exhaustive, "Skip the all-2^32-inputs cast check");
  command->add_flag("--no-peers", no_peers,
                    "Skip the cuBLASLt and torch._scaled_mm comparisons with the models");
  static std::string json_path;
  command->add_option(
      "--json", json_path,
      "Also write the outcome as JSON to this file (for notebooks/gpu_vs_reference.ipynb)");
  command->callback([] {
#if FP8LAB_HAVE_CUDA
    int status = 0;
    auto document = check_document("skipped", "");
    try {
      status = run_check(!no_exhaustive, !no_peers, document);
    } catch (const std::exception& error) {
      std::printf("fp8lab check: error: %s\n", error.what());
      document["status"] = "error";
      document["reason"] = error.what();
      status = 1;
    }
#else
    std::printf(
        "fp8lab check: nothing checked: this fp8lab was built without CUDA (nvcc not found)\n");
    int status = kSkipped;
    const auto document =
        check_document("skipped", "this fp8lab was built without CUDA (nvcc not found)");
#endif
    if (!json_path.empty()) {
      try {
        write_file_atomically(json_path, document.dump(2) + "\n");
        std::printf("fp8lab check: wrote %s\n", json_path.c_str());
      } catch (const std::exception& error) {
        std::printf("fp8lab check: error: --json: %s\n", error.what());
        status = 1;
      }
    }
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace fp8lab::experiments::cli
