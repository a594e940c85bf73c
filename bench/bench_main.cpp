#include "bench/bench_main.hpp"

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <vector>

namespace fp8lab::bench {
namespace {

std::vector<void (*)()>& row_registrations() {
  static std::vector<void (*)()> registrations;  // a function's static: no initialization order
  return registrations;
}

}  // namespace

bool add_rows(void (*register_rows)()) {
  row_registrations().push_back(register_rows);
  return true;
}

}  // namespace fp8lab::bench

int main(int argc, char** argv) {
  // glibc's heap kept across training steps, as in the fp8lab program (experiments/main.cpp; docs/
  // performance.md "The step's page faults"): blocks up to 32 MiB from the heap, not a fresh mmap
  // each, and freed memory kept up to 512 MiB at the heap's top instead of returned and faulted in
  // again on the next step. Set before any allocation a row makes, for the reference and every row.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  for (const auto register_rows : fp8lab::bench::row_registrations()) register_rows();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
