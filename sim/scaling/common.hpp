// What every scaling recipe of sim/scaling/ shares: the recipe-level FP8 format choice, the
// distributed amax-reduction hook, the result of one quantize, and input checks.
//
// Policy lives in sim/scaling/<recipe>.{hpp,cpp} (how a recipe picks a scale and keeps state);
// mechanics (q = cast(RN(x * s)) fused with amax and counts) come from sim/quantize.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "sim/format.hpp"
#include "sim/quantize.hpp"
#include "sim/settings.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::sim::scaling {

// Fp8Format, forward_format and backward_format: sim/settings.hpp.

// Largest finite value of an element format as fp32 (448 for E4M3, 57344 for E5M2), derived from
// its FormatSpec. Exact: both are small integers.
float fp8_max(Format format);

// Distributed amax reduction (te-accelerate.md §2.7, §5.2 step 2; torchao-mx.md §2.1): called with
// this rank's amax values, it must replace each by the MAX over all ranks, in place. An empty
// std::function means a single process (no reduction).
using AmaxReducer = std::function<void(std::span<float> amaxes)>;

// One quantized tensor with the counts of what happened to its elements.
struct QuantizeResult {
  QuantizedTensor tensor;
  QuantizeStats stats;
};

// Throws std::invalid_argument naming `function` and the field when rows or cols < 1, rows * cols
// overflows int64 or differs from x.size() (checked_element_count), or `format` is not E4M3 / E5M2
// (nor E2M1 / E2M3 / E3M2 when `subbyte_allowed`: the block walk of blocked.hpp casts those too).
void check_tensor_arguments(const char* function, std::size_t size, std::int64_t rows,
                            std::int64_t cols, Format format, bool subbyte_allowed = false);

// max |x| with torch.max semantics: NaN if any element is NaN, else the max over |x| (0 for an
// empty span). torchao's amax propagates NaN (torchao-mx.md §2.1, §4.2); TE's drops it (fmaxf).
float amax_nan_propagating(std::span<const float> x);
// Whether any element is NaN.
bool contains_nan(std::span<const float> x);

// torch.log2 of an fp32 value as fp8lab models it: the correctly rounded fp32 log2, computed as
// log2 in double rounded once to float (torchao-mx.md §2.2). Rounding to fp32 is the point: just
// above 2^k the result is exactly k (so ceil/floor of it misfire), which torchao's pow2 scales
// (§2.2) and v0.18's RCEIL (§4.3) both inherit.
float torch_log2_f32(float x);

}  // namespace fp8lab::sim::scaling
