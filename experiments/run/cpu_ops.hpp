// The bits of the LibTorch CPU ops a training run calls, so that two machines can be compared op by
// op (docs/architecture.md, "Bits across processors"). `fp8lab cpu-ops` prints them;
// tests/experiments/portable_ops_test.cpp checks them under FP8LAB_CPU_NUMERICS=portable against
// the hashes checked in beside it, so an op whose bits move fails by its name on whichever
// processor it moves.
//
// Every input is made from integers (inputs_for below), so it is the same bits on every machine:
// no LibTorch sampling (vectorized per CPU) and no libm call goes into an input.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fp8lab::experiments {

struct CpuOpHash {
  std::string name;                 // what was computed, e.g. "mm 512x128x4096" or "silu grad"
  std::vector<std::int64_t> shape;  // of the output
  std::string hash;                 // FNV-1a 64 of the output's bytes, 16 hex digits
  double sum = 0.0;                 // the output summed in fp64, a readable check
};

// Each entry of the op list: the ATen ops it exercises (as RecordFunction names them, e.g.
// "aten::mm"), and what it hashes.
struct CpuOpEntry {
  std::string name;
  std::set<std::string> covers;
};

// The list, in order, without computing anything.
std::vector<CpuOpEntry> cpu_op_entries();

// Computes every entry of the list in this process (whatever its CPU numerics) and hashes each
// output. Single-threaded LibTorch is the caller's business (fp8lab cpu-ops sets it).
std::vector<CpuOpHash> hash_cpu_ops();

// One line per hash: "name<tab>shape<tab>hash<tab>sum" (shape as 512x128, "scalar" for 0-d; sum
// with 17 significant digits). The checked-in file holds these lines.
std::string cpu_op_line(const CpuOpHash& op);

// The ATen ops (RecordFunction's FUNCTION scope) that `steps` training steps of the workload's
// baseline call, with their eval at step 0 and at the last step, and how often each is called.
std::map<std::string, std::int64_t> trace_cpu_ops(const std::string& workload_spec,
                                                  std::int64_t steps);

// ATen ops that move or make data without arithmetic (views, copies, fills, casts to a wider
// type, indexing): their output bits cannot depend on the processor, so the list need not hash
// them. Every other op a trace finds must be covered by an entry (portable_ops_test checks it).
const std::set<std::string>& cpu_ops_without_arithmetic();

}  // namespace fp8lab::experiments
