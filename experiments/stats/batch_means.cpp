#include "experiments/stats/batch_means.hpp"

#include <algorithm>
#include <vector>

namespace fp8lab::experiments {

std::optional<MeanInterval> batch_means_interval(std::span<const double> series) {
  const std::size_t n = series.size();
  const std::size_t batches = std::min(kBatches, n / 2);
  if (batches < kMinPairedSeeds) return std::nullopt;
  const std::size_t size = n / batches;
  const std::size_t start = n - batches * size;
  std::vector<double> means(batches, 0.0);
  for (std::size_t b = 0; b < batches; ++b) {
    for (std::size_t i = 0; i < size; ++i) means[b] += series[start + b * size + i];
    means[b] /= static_cast<double>(size);
  }
  return t_interval(means);
}

}  // namespace fp8lab::experiments
