// Paired comparisons whose two records ran on different CPU numerics (the records' "machine":
// experiments/run/cpu_numerics.hpp). Such a pair's difference holds LibTorch's per-processor
// rounding as well as the recipe's effect, so the report names each one. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>
#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

// Whether two "machine" objects promise the same LibTorch bits: the same mode, ATen kernels and
// MKL branch, and in native mode the same CPU model (it stands for the branch MKL picks). sim's
// SIMD target is not compared: sim's bits are the same on every target (tests/sim/*targets*).
// Records older than the field (no "machine") are not compared: nothing is known.
bool same_numerics(const Machine& a, const Machine& b);

// One note per run whose record and its baseline's (report_data.hpp find_baseline) differ in
// same_numerics, naming both machines; empty when every pair ran alike.
std::vector<std::string> cross_machine_notes(const std::vector<RunRecord>& records);

}  // namespace fp8lab::experiments
