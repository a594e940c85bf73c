// The one main of every benchmark program (bench_main.cpp): Google Benchmark's flags, then the
// rows. Rows declared with BENCHMARK() need nothing here; rows whose names are known only at run
// time (workloads, recipes) are added by a function handed to add_rows at namespace scope, which
// main calls before reading the flags, so that --benchmark_filter sees them:
//
//   const bool registered = fp8lab::bench::add_rows(register_all);
#pragma once

namespace fp8lab::bench {

bool add_rows(void (*register_rows)());

}  // namespace fp8lab::bench
