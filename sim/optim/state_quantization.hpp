// How AdamW's moments are stored between steps (issue 43 item 3, docs/numerics.md
// "Optimizer states"): a pure function of the fp32 moments, bit-exact, no LibTorch.
//
// Every format names the paper whose code defines it (read at the source, see each function):
//   fp32             today's AdamW: the moments as computed.
//   bf16             round to nearest even, unscaled (DeepSeek-V3 keeps its moments so).
//   fp16, e4m3, e5m2 scaled, then round to nearest even (fp8: saturating to +-max):
//     per_tensor     FP8-LM (arXiv 2310.18313; Azure/MS-AMP msamp/optim/adamw.py, adamw.cu): a
//                    power-of-two multiplier per tensor from the new moments' amax,
//                    ScalingMeta.compute_scaling_factor with margin 0: e = floor(log2(fmax /
//                    amax)), scale = 2^e, code = cast(x * scale), value = code * (1 / scale);
//                    an amax of 0 (or not finite) keeps the previous scale, which starts at 1.
//     per_block:N    COAT (arXiv 2410.19313; NVlabs/COAT fp8_adamw_cuda_kernel.cu): groups of N
//                    consecutive elements (row-major, the last one shorter), scale = (amax +
//                    1e-30) / fmax, code = cast(x / scale), value = code * scale.
//   expansion coat   COAT's dynamic range expansion on per_block e4m3 states
//                    (fp8_adamw_expand_cuda_kernel.cu): per group, max and min of |x| (min over
//                    the non-zero elements; the kernel's tree reduction keeps a zero in some lanes,
//                    see docs/numerics.md), each + 1e-30; center = sqrt(max) sqrt(min);
//                    k = floor(log2(448^2 / 2) / log2(max / min) * expand_min) / expand_min;
//                    y = sign(x) (|x| / center)^k; scale = (max / center)^k / 448;
//                    code = cast(y / scale); value = sign(v) |v|^(1 / k) center, v = code * scale,
//                    a NaN v positive as on the kernel's GPU (an all-equal or all-zero group has
//                    k = inf and decodes to +-center whatever its code).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fp8lab::sim::optim {

enum class StateFormat : std::uint8_t { kFp32, kBf16, kFp16, kE4M3, kE5M2 };
enum class StateScaling : std::uint8_t { kPerTensor, kPerBlock };
enum class Expansion : std::uint8_t { kNone, kCoat };

// Whether the format takes a scale (fp16, e4m3, e5m2). Inline: recipes/ reads it when it checks a
// recipe file, and the recipe readers' fuzz target links no sim/ source.
inline bool is_scaled(StateFormat format) {
  return format == StateFormat::kFp16 || format == StateFormat::kE4M3 ||
         format == StateFormat::kE5M2;
}
// The format's largest finite value (fp16 65504, e4m3 448, e5m2 57344); 0 for fp32 and bf16.
float state_format_max(StateFormat format);

struct StateQuantization {
  StateFormat format = StateFormat::kFp32;
  StateScaling scaling = StateScaling::kPerTensor;  // scaled formats only
  std::int64_t block = 128;                         // kPerBlock only
  Expansion expansion = Expansion::kNone;           // kCoat: e4m3 with kPerBlock only
  int expand_min = 16;                              // COAT's default (FP8QuantizationConfig)
  friend bool operator==(const StateQuantization&, const StateQuantization&) = default;
};

// One moment of one tensor as stored.
struct StoredState {
  std::vector<std::uint32_t> codes;  // per element: fp32 bits, or the bf16 / fp16 / fp8 code
  std::vector<float> scales;         // per tensor: 1 (FP8-LM's multiplier); per block: 1 each
  std::vector<float> exponents;      // expansion only: k per block
  std::vector<float> centers;        // expansion only: sqrt(max) sqrt(min) per block
  friend bool operator==(const StoredState&, const StoredState&) = default;
};

// Zeros of n elements with the peers' initial scales: per tensor 1 (MS-AMP's ScalingMeta), per
// block 0, expansion k = 1 and center = 1 (COAT's optimizer state initialisation).
StoredState initial_state(std::size_t n, const StateQuantization& q);
// The values the next step reads. out.size() must equal the state's element count.
void decode_state(const StoredState& state, const StateQuantization& q, std::span<float> out);
// Stores x (the fp32 moments after a step) into state (same element count).
void encode_state(std::span<const float> x, const StateQuantization& q, StoredState& state);

}  // namespace fp8lab::sim::optim
