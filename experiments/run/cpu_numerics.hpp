// Which of LibTorch's CPU code paths a run's fp32 arithmetic takes, and what every record stores
// about the machine (docs/architecture.md, "Bits across processors").
//
// sim/ gives the same bits on every SIMD target Highway may choose (tests/sim/*_targets). LibTorch
// does not: ATen picks its vectorized kernels from the CPU (ATEN_CPU_CAPABILITY pins them) and MKL
// its code branch (MKL_CBWR; only AUTO and COMPATIBLE are honoured on non-Intel processors), so a
// baseline's and an FP8 run's non-GEMM ops can differ in the last bits between an Intel and an AMD
// machine, and a chaotic trajectory then differs as a whole (shared/spec/reference/cross-cpu.md).
//
//   native    (default) LibTorch chooses for this CPU: fastest; records pair only within one
//             machine kind, and the report flags a pair whose records differ here.
//   portable  ATEN_CPU_CAPABILITY=default and MKL_CBWR=COMPATIBLE: the code paths that every
//             x86-64 processor runs alike (about 1.5x the native step time on the 2-core machines).
// Chosen with the environment variable FP8LAB_CPU_NUMERICS, read once by `main` before LibTorch
// computes anything, and inherited by a sweep's child runs.
#pragma once

#include <string>

#include "experiments/results/run_record.hpp"

namespace fp8lab::experiments {

inline constexpr const char* kCpuNumericsVariable = "FP8LAB_CPU_NUMERICS";

// Reads FP8LAB_CPU_NUMERICS and, for `portable`, sets LibTorch's two pins in this process's
// environment (so they hold before its first kernel runs and reach every child). Returns an error
// message naming the variable and what it accepts (bad value, or a pin already set to something
// else), or "" when all is well.
std::string pin_cpu_numerics_from_environment();

// cpu_model, cpu_numerics, aten_cpu_capability, mkl_cbwr and sim_simd_target: the processor (/proc/cpuinfo's model name), the mode, the kernels ATen chose, MKL's branch as asked
// ("AUTO" when unset) and sim's Highway target. Stored in every record as "machine";
// experiments/stats/cross_machine.hpp compares two.
Machine machine_facts();

}  // namespace fp8lab::experiments
