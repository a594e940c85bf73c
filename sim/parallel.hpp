// Deterministic work splitting for sim/ (the GEMMs and the quantizers): units [0, count) are handed out through an atomic
// counter to the calling thread and up to threads - 1 workers of a persistent pool (GEMMs of a
// training step are small: starting std::threads per call would cost as much as the GEMM). Each
// unit must write disjoint outputs, so results never depend on which thread ran which unit.
#pragma once

#include <cstdint>
#include <functional>

namespace fp8lab::sim {

// Runs body(u) for every u in [0, count); returns when all have finished. Calls from several
// threads are served one at a time. If a unit throws, the remaining units are skipped and the
// first exception is rethrown to the caller once every thread has left body.
void run_units(std::int64_t count, int threads, const std::function<void(std::int64_t)>& body);

template <typename Body>
void parallel_units(std::int64_t count, int threads, Body body) {
  if (threads <= 1 || count <= 1) {
    for (std::int64_t u = 0; u < count; ++u) body(u);
    return;
  }
  run_units(count, threads, body);
}

}  // namespace fp8lab::sim
