// Each column is named once, in the tables below, for the writer and the reader alike
// (parquet_table.hpp, which holds the Arrow and Parquet code both sidecars share).
#include "experiments/results/layer_stats_sidecar.hpp"

#include "experiments/results/parquet_table.hpp"
#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {
namespace {

using parquet_table::Column;

// The sidecar's columns by C++ type, in the file's order (int64, then string, then double). Each
// is written once: its Parquet name is its LayerStatsRow member's name.
#define FP8LAB_COLUMN(member) \
  { #member, &LayerStatsRow::member }
constexpr Column<LayerStatsRow, std::int64_t> kIntColumns[] = {
    FP8LAB_COLUMN(step),        FP8LAB_COLUMN(quantizations), FP8LAB_COLUMN(count),
    FP8LAB_COLUMN(underflowed), FP8LAB_COLUMN(saturated),     FP8LAB_COLUMN(nan)};
constexpr Column<LayerStatsRow, std::string> kStringColumns[] = {
    FP8LAB_COLUMN(layer), FP8LAB_COLUMN(tensor), FP8LAB_COLUMN(gemm), FP8LAB_COLUMN(copy),
    FP8LAB_COLUMN(recipe)};
constexpr Column<LayerStatsRow, double> kDoubleColumns[] = {
    FP8LAB_COLUMN(underflow_pct), FP8LAB_COLUMN(overflow_pct),
    FP8LAB_COLUMN(sqnr_db),       FP8LAB_COLUMN(mse),
    FP8LAB_COLUMN(amax),          FP8LAB_COLUMN(scale_inv_min),
    FP8LAB_COLUMN(scale_inv_max), FP8LAB_COLUMN(max_block_dynamic_range_log2),
    FP8LAB_COLUMN(kurtosis)};
#undef FP8LAB_COLUMN

const parquet_table::Schema<LayerStatsRow> kSchema{"layer statistics sidecar", kIntColumns,
                                                   kStringColumns, kDoubleColumns};

}  // namespace

std::filesystem::path layer_stats_relative_path(const std::string& run_id) {
  check_run_id(run_id);
  return std::filesystem::path("layer_stats") / (run_id + ".parquet");
}

std::string layer_stats_parquet(const std::vector<LayerStatsRow>& rows,
                                const std::filesystem::path& path) {
  return parquet_table::to_parquet(kSchema, rows, path);
}

void write_layer_stats(const std::filesystem::path& path, const std::vector<LayerStatsRow>& rows) {
  write_file_atomically(path, layer_stats_parquet(rows, path));
}

std::vector<LayerStatsRow> read_layer_stats(const std::filesystem::path& path) {
  return parquet_table::from_parquet(kSchema, path);
}

}  // namespace fp8lab::experiments
