#include "bench/bench_main.hpp"

#include <benchmark/benchmark.h>

#include <vector>

#include "experiments/run/process_heap.hpp"

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
  // Before any allocation a row makes, for the reference and every row.
  fp8lab::experiments::keep_heap_across_steps();
  for (const auto register_rows : fp8lab::bench::row_registrations()) register_rows();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
