// TE's fused delayed-scaling update (gpu/scaling/delayed.hpp): one block per slot of every group.
// The block rolls the slot's history in place, one chunk of blockDim.x rows at a time, each thread
// holding its new entry in a register between the chunk's reads and its writes (so the history
// length has no limit: nothing is staged in shared memory), reduces the window's max with fmaxf
// (exact, so the order of the reduction cannot matter), and thread 0 updates the scale with one
// IEEE division, as sim::scaling::fused_amax_and_scale_update spells it:
//   last = (R && R[j] != 0) ? R[j] : H[0][j]
//   if last != 0: H[i][j] = (i > 0 ? a_i : 0), a_i = (i < len-1 ? H[i+1][j] : last), amax = max a_i
//   most_recent: amax = last
//   if recompute and isfinite(amax) and amax > 0: S[j] = RN(scaled_max / amax)
//   if isinf(S[j]): S[j] = FLT_MAX
#include <cfloat>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/scaling/delayed.hpp"

namespace fp8lab::gpu::scaling {
namespace {

constexpr int kThreads = 256;

struct GroupTable {
  DelayedUpdateGroup group[kMaxDelayedGroupsPerLaunch];
  std::int64_t first_block[kMaxDelayedGroupsPerLaunch + 1];  // prefix sums of slots
  int count;
};

__global__ void __launch_bounds__(kThreads) delayed_update_kernel(const GroupTable table) {
  __shared__ float warp_max[kThreads / 32];
  int g = 0;
  while (static_cast<std::int64_t>(blockIdx.x) >= table.first_block[g + 1]) ++g;
  const DelayedUpdateGroup& group = table.group[g];
  const std::int64_t j = blockIdx.x - table.first_block[g];
  const std::int64_t n = group.slots, len = group.len;
  float* h = group.history;
  const float reduced = group.reduced != nullptr ? group.reduced[j] : 0.0f;
  const float last = reduced != 0.0f ? reduced : h[j];
  float amax = 0.0f;
  if (last != 0.0f) {  // NaN != 0: a NaN amax rolls in, as in TE. Uniform over the block.
    // Chunk [c, c + blockDim.x) reads rows c+1 .. c+blockDim.x and, after the barrier, writes rows
    // c .. c+blockDim.x-1; later chunks read only rows above c+blockDim.x, and row c+blockDim.x is
    // written by the next chunk after its barrier, which every reader of it has passed. So every
    // read sees the history before the update (row 0 included: `last` is read before any barrier).
    for (std::int64_t c = 0; c < len; c += blockDim.x) {
      const std::int64_t i = c + threadIdx.x;
      float a = 0.0f;
      if (i < len) {
        a = i < len - 1 ? h[(i + 1) * n + j] : last;
        amax = fmaxf(amax, a);
      }
      __syncthreads();
      if (i < len) h[i * n + j] = i > 0 ? a : 0.0f;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
  }
  if ((threadIdx.x & 31u) == 0) warp_max[threadIdx.x / 32] = amax;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kThreads / 32; ++w) amax = fmaxf(amax, warp_max[w]);
  if (group.most_recent) amax = last;
  float s = group.scale[j];
  if (group.recompute_scale && isfinite(amax) && amax > 0.0f) s = __fdiv_rn(group.scaled_max, amax);
  if (isinf(s)) s = FLT_MAX;
  group.scale[j] = s;
}

void check_group(const DelayedUpdateGroup& g, std::size_t index) {
  const std::string where = "gpu::scaling::delayed_update: groups[" + std::to_string(index) + "].";
  if (g.history == nullptr || g.scale == nullptr) {
    throw std::invalid_argument(where + "history and .scale must be device pointers, got null");
  }
  if (g.slots < 1)
    throw std::invalid_argument(where + "slots = " + std::to_string(g.slots) + "; accepted: >= 1");
  if (g.len < 1) {
    throw std::invalid_argument(where + "len = " + std::to_string(g.len) + "; accepted: >= 1");
  }
}

}  // namespace

void delayed_update(const std::vector<DelayedUpdateGroup>& groups, cudaStream_t stream) {
  for (std::size_t i = 0; i < groups.size(); ++i) check_group(groups[i], i);
  for (std::size_t first = 0; first < groups.size(); first += kMaxDelayedGroupsPerLaunch) {
    GroupTable table{};
    table.count = 0;
    table.first_block[0] = 0;
    for (std::size_t i = first; i < groups.size() && table.count < kMaxDelayedGroupsPerLaunch;
         ++i) {
      table.group[table.count] = groups[i];
      table.first_block[table.count + 1] = table.first_block[table.count] + groups[i].slots;
      ++table.count;
    }
    // Unused entries repeat the end, so the group search stops at table.count.
    for (int k = table.count + 1; k <= kMaxDelayedGroupsPerLaunch; ++k) {
      table.first_block[k] = table.first_block[table.count];
    }
    const auto blocks = static_cast<unsigned>(table.first_block[table.count]);
    delayed_update_kernel<<<blocks, kThreads, 0, stream>>>(table);
    FP8LAB_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace fp8lab::gpu::scaling
