// The verdict on a list of experiments/gpu_check results (one per kernel and case), shared by the
// device tests and their host twins: each report printed (a passing run's log keeps its counts),
// no mismatch, and a nonzero output compared (an all-zero output cannot pass).
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "experiments/gpu_check/checks.hpp"
#include "sim/cast.hpp"
#include "tests/support/exhaustive.hpp"

namespace fp8lab::testing {

inline void check_every_result(const std::vector<experiments::gpu_check::CheckResult>& results) {
  for (const auto& r : results) {
    std::printf("%s\n", r.report().c_str());
    INFO(r.report());
    CHECK(r.mismatches == 0);
    CHECK(r.nonzero > 0);
  }
}

// For each FP8 format and overflow mode: check(log, i, format, mode) for every i in [0, count) on
// all cores, then no mismatch; a failure names the format, mode, `what` ("scale 0.75 over N
// groups") and the first mismatches' bits.
template <typename Check>
void check_every_format_and_mode(std::uint64_t count, const std::string& what, Check check) {
  for (const sim::Format format : sim::kFp8Formats) {
    for (const sim::Overflow mode : sim::kOverflowModes) {
      MismatchLog log;
      parallel_for_u64(0, count, [&](std::uint64_t i) { check(log, i, format, mode); });
      INFO(sim::spec(format).name << " " << sim::to_string(mode) << " " << what << ": "
                                  << log.report());
      CHECK(log.count == 0);
    }
  }
}

}  // namespace fp8lab::testing
