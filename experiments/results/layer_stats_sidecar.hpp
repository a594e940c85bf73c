// A run's per-layer statistics sidecar: DIR/layer_stats/<run_id>.parquet, one Parquet file in
// long format (a row per step, layer, tensor, GEMM copy and recipe), which pandas reads directly
// (pandas.read_parquet). The run record names it by its path relative to DIR
// ("layer_stats_sidecar"); columns and units in docs/results-schema.md.
//
// Arrow and Parquet stay behind this header: layer_stats_sidecar.cpp is the only file that
// includes them (cmake/fp8lab_arrow.cmake). No LibTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab::experiments {

// The recipe column of the rows that measure the run's own quantization (what-if rows carry the
// what-if recipe's name instead).
inline constexpr const char* kTrainedRecipe = "trained";
// The recipe column of the rows of AdamW's stored moments (recipes' optimizer_states, issue 43
// item 3): one per parameter, moment (tensor exp_avg | exp_avg_sq) and logged step, gemm
// "optimizer", copy "stored" (experiments/run/quantized_adamw.hpp).
inline constexpr const char* kOptimizerStatesRecipe = "optimizer_states";

// One row: which quantization, and its statistics (OperandStats' derived figures, computed there).
struct LayerStatsRow {
  std::int64_t step = 0;
  std::string layer;
  std::string tensor;  // input | weight | grad_output
  std::string gemm;    // fprop | dgrad | wgrad: the GEMM this copy feeds
  std::string copy;    // rowwise | columnwise: the copy's scale axis (sim::scaling::scale_axis)
  std::string recipe;  // kTrainedRecipe, or a what-if recipe's name
  std::int64_t quantizations = 0;  // quantize calls pooled (forward, eval passes, backward)
  std::int64_t count = 0;
  std::int64_t underflowed = 0;
  std::int64_t saturated = 0;
  std::int64_t nan = 0;
  double underflow_pct = 0.0;
  double overflow_pct = 0.0;
  double sqnr_db = 0.0;
  double mse = 0.0;
  double amax = 0.0;
  double scale_inv_min = 0.0;
  double scale_inv_max = 0.0;
  double max_block_dynamic_range_log2 = 0.0;
  double kurtosis = 0.0;
};

// Relative to a results directory: where a run's sidecar lives.
std::filesystem::path layer_stats_relative_path(const std::string& run_id);

// `rows` as the bytes of one Parquet file; `path` names it in errors (std::runtime_error).
std::string layer_stats_parquet(const std::vector<LayerStatsRow>& rows,
                                const std::filesystem::path& path);
// Writes layer_stats_parquet(rows) at `path`, atomically (write_file_atomically: temp file, fsync,
// rename), so that a killed run leaves no half file and a resumed sweep rewrites it whole. Runs
// write theirs with ResultsDirectory::write_file (no link followed under the results directory).
void write_layer_stats(const std::filesystem::path& path, const std::vector<LayerStatsRow>& rows);

// Reads a sidecar back. Throws std::runtime_error naming the file and the column when it is not a
// Parquet file or a column is missing or of another type; NotARegularFile (no_follow.hpp) when it
// is a FIFO, a device, a directory or a link.
std::vector<LayerStatsRow> read_layer_stats(const std::filesystem::path& path);

}  // namespace fp8lab::experiments
