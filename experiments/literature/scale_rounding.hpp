// L2 (docs/literature.md): E8M0 scale rounding. Mishra et al. 2025 (arXiv 2506.08027): the OCP
// specification's rounding of MX scales can diverge in pre-training, rounding the scale up
// ("round-to-infinity") trained an 8B model on 15T tokens; torchao issue 2035 (RCEIL: amax 150
// gives code 126 where OCP ceil gives 127); mlx PR 4353 (round-to-nearest scales: worst loss on a
// block maximum 29.27%, 243 of 512 blocks above 6.25%; rounding up: 5.84%, 0 of 512). No LibTorch.
//
// Per MX block (1 x 32, E4M3 elements) of a tensor, for the torchao modes floor, even, ceil and
// rceil (torchao 0.18, sim/scaling/mx.hpp):
//   clipped    the block maximum times the block's multiplier exceeds 448: it saturates
//   loss       |decode(q(max)) * scale_inv - max| / max: what the block's largest element lost
// An in-range element loses at most half an E4M3 step (6.25%); more is clipping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/literature/test_tensors.hpp"

namespace fp8lab::experiments::literature {

inline constexpr double kHalfStepE4M3 = 0.0625;

struct ScaleRoundingRow {
  Distribution distribution;
  std::string mode;  // floor | even | ceil | rceil
  std::int64_t blocks = 0;
  std::int64_t clipped = 0;         // blocks whose maximum saturated
  std::int64_t over_half_step = 0;  // blocks whose maximum lost more than 6.25%
  double worst_loss = 0;            // over blocks
  double mean_loss = 0;
};

struct ScaleRoundingOptions {
  std::int64_t rows = 64;
  std::int64_t k = 4096;  // the L1 tensors at K = 4096: 64 x 4096 / 32 = 8192 blocks each
  std::uint64_t seed = 0;
};

// One row per (distribution, mode), over the A operand of L1's pair.
std::vector<ScaleRoundingRow> measure_scale_rounding(const ScaleRoundingOptions& options);

// The per-block statistics of one tensor and mode (exposed for the tests).
ScaleRoundingRow block_statistics(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                                  const std::string& mode);

// The E8M0 code of one block amax under each mode (E4M3 elements, torchao 0.18), e.g. the
// torchao issue 2035 vector: amax 150 -> floor 126, ceil 127, rceil 126.
std::uint8_t scale_code(float amax, const std::string& mode);

const std::vector<std::string>& scale_modes();  // floor, even, ceil, rceil

std::string format_scale_rounding_table(const std::vector<ScaleRoundingRow>& rows);

}  // namespace fp8lab::experiments::literature
