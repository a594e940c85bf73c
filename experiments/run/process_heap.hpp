// glibc's heap kept across training steps, for a program that trains (the fp8lab command and the
// benchmark programs call it first thing in main; docs/performance.md "The step's page faults").
// With glibc's defaults the tensors and buffers a step frees are returned to the kernel (the heap's
// top trimmed past 128 KiB, or each block over the dynamic threshold its own mmap) and the next
// step faults the same pages in again, zeroed. Here blocks up to 32 MiB come from the heap and up
// to 512 MiB of free memory stays at its top. No bit depends on it. A process setting, so a
// program's main sets it, never a library.
#pragma once

#include <malloc.h>

namespace fp8lab::experiments {

inline void keep_heap_across_steps() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

}  // namespace fp8lab::experiments
