// fp8lab check: every GPU kernel against sim/ on random and adversarial tensors (NUMERICS.md §4),
// printed as a table (kernel, cases, values, mismatches, max ULP). Exit status: 0 when every
// deterministic kernel matched bit for bit, 1 on any mismatch, 77 when there is no usable CUDA
// device (or fp8lab was built without CUDA), with the reason printed. Peers (cuBLASLt) are
// reported with their distance from the models and never fail the command.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "experiments/cli/commands.hpp"

#if FP8LAB_HAVE_CUDA
#include "experiments/gpu_check/checks.hpp"
#include "gpu/device.hpp"
#endif

namespace fp8lab::experiments::cli {
namespace {

constexpr int kSkipped = 77;  // CTest's skip code, used by every gpu test too

#if FP8LAB_HAVE_CUDA
int run_check(bool exhaustive, bool peers) {
  const gpu::DeviceInfo device = gpu::query_device();
  if (!device.available) {
    std::printf("fp8lab check: nothing checked: %s (driver %s, runtime %s)\n", device.reason.c_str(),
                device.driver_version.c_str(), device.runtime_version.c_str());
    return kSkipped;
  }
  std::printf("fp8lab check on %s (sm_%d), driver %s, runtime %s\n", device.name.c_str(),
              device.compute_capability, device.driver_version.c_str(), device.runtime_version.c_str());
  std::vector<gpu_check::CheckResult> results;
  auto add = [&](std::vector<gpu_check::CheckResult> more) {
    for (auto& r : more) results.push_back(std::move(r));
  };
  add(gpu_check::check_quantize_kernels());
  add(gpu_check::check_scaling_quantizers());
  add(gpu_check::check_gemm_models());
  if (exhaustive) add(gpu_check::check_casts_all_inputs(false));
  if (peers) add(gpu_check::check_cublaslt_peer());

  std::printf("\n%-58s %7s %12s %11s %9s %10s  %s\n", "kernel", "cases", "values", "mismatches",
              "max ulp", "mean ulp", "status");
  int failed = 0;
  for (const auto& r : results) {
    const char* status = r.peer ? "peer" : (r.passed() ? "ok" : "FAIL");
    if (!r.passed()) ++failed;
    std::printf("%-58s %7llu %12llu %11llu %9llu %10.3g  %s\n", r.kernel.c_str(),
                static_cast<unsigned long long>(r.cases), static_cast<unsigned long long>(r.compared),
                static_cast<unsigned long long>(r.mismatches), static_cast<unsigned long long>(r.max_ulp),
                r.mean_ulp(), status);
  }
  for (const auto& r : results) {
    if (r.first.empty()) continue;
    std::printf("\n%s\n", r.report().c_str());
  }
  std::printf("\n%zu kernels checked, %d failed%s\n", results.size(), failed,
              failed == 0 ? ": every deterministic kernel equals sim/ bit for bit" : "");
  return failed == 0 ? 0 : 1;
}
#endif

}  // namespace

void add_check_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "check", "Run every GPU kernel against sim/ on random and adversarial tensors (exit 77 without a GPU)");
  static bool no_exhaustive = false, no_peers = false;
  command->add_flag("--no-exhaustive", no_exhaustive, "Skip the all-2^32-inputs cast check");
  command->add_flag("--no-peers", no_peers, "Skip the cuBLASLt comparison with the models");
  command->callback([] {
#if FP8LAB_HAVE_CUDA
    int status = 0;
    try {
      status = run_check(!no_exhaustive, !no_peers);
    } catch (const std::exception& error) {
      std::printf("fp8lab check: error: %s\n", error.what());
      status = 1;
    }
#else
    std::printf("fp8lab check: nothing checked: this fp8lab was built without CUDA (nvcc not found)\n");
    const int status = kSkipped;
#endif
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace fp8lab::experiments::cli
