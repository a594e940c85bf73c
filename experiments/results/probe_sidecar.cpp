// Each column is named once, in the tables below, for the writer and the reader alike
// (parquet_table.hpp); the words of the direction and variant columns are checked on reading, so
// that a report never files a row under a direction or GEMM it does not know.
#include "experiments/results/probe_sidecar.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <span>
#include <vector>

#include "experiments/results/parquet_table.hpp"
#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {
namespace {

using parquet_table::Column;

// Its Parquet name is the ProbeRow member's name.
#define FP8LAB_COLUMN(member) \
  { #member, &ProbeRow::member }
constexpr Column<ProbeRow, std::int64_t> kIntColumns[] = {FP8LAB_COLUMN(step), FP8LAB_COLUMN(draw)};
constexpr Column<ProbeRow, std::string> kStringColumns[] = {
    FP8LAB_COLUMN(direction), FP8LAB_COLUMN(recipe), FP8LAB_COLUMN(variant), FP8LAB_COLUMN(tensor)};
constexpr Column<ProbeRow, double> kDoubleColumns[] = {FP8LAB_COLUMN(loss),
                                                       FP8LAB_COLUMN(reference_loss),
                                                       FP8LAB_COLUMN(grad_norm),
                                                       FP8LAB_COLUMN(error_norm),
                                                       FP8LAB_COLUMN(cosine),
                                                       FP8LAB_COLUMN(rel_error),
                                                       FP8LAB_COLUMN(bias),
                                                       FP8LAB_COLUMN(noise),
                                                       FP8LAB_COLUMN(chmiel_ratio),
                                                       FP8LAB_COLUMN(update_cosine),
                                                       FP8LAB_COLUMN(update_rel_error),
                                                       FP8LAB_COLUMN(draw_spread)};
// Added after the first sidecars were written: read when present (NaN otherwise).
constexpr Column<ProbeRow, double> kRhtColumns[] = {
    FP8LAB_COLUMN(wgrad_input_crest),     FP8LAB_COLUMN(wgrad_input_crest_rht),
    FP8LAB_COLUMN(wgrad_input_rel_error), FP8LAB_COLUMN(wgrad_input_rel_error_rht),
    FP8LAB_COLUMN(wgrad_grad_crest),      FP8LAB_COLUMN(wgrad_grad_crest_rht),
    FP8LAB_COLUMN(wgrad_grad_rel_error),  FP8LAB_COLUMN(wgrad_grad_rel_error_rht)};
#undef FP8LAB_COLUMN

constexpr const char* kKind = "probe sidecar";
const parquet_table::Schema<ProbeRow> kSchema{kKind, kIntColumns, kStringColumns, kDoubleColumns};

// Every column, for writing.
std::vector<Column<ProbeRow, double>> all_doubles() {
  std::vector<Column<ProbeRow, double>> out(std::begin(kDoubleColumns), std::end(kDoubleColumns));
  out.insert(out.end(), std::begin(kRhtColumns), std::end(kRhtColumns));
  return out;
}

template <std::size_t N>
void check_word(const std::string& value, const char* column,
                const std::array<const char*, N>& accepted, const std::filesystem::path& path) {
  if (std::any_of(accepted.begin(), accepted.end(), [&](const char* a) { return value == a; })) {
    return;
  }
  std::string list;
  for (const char* a : accepted) list.append(list.empty() ? "" : ", ").append(a);
  parquet_table::fail({kSchema.kind, path}, std::string("column '") + column + "' holds '" + value +
                                                "'; accepted: " + list);
}

}  // namespace

std::filesystem::path probe_relative_path(const std::string& run_id) {
  check_run_id(run_id);
  return std::filesystem::path("probes") / (run_id + ".parquet");
}

std::string probe_parquet(const std::vector<ProbeRow>& rows, const std::filesystem::path& path) {
  const auto doubles = all_doubles();
  const parquet_table::Schema<ProbeRow> schema{kKind, kIntColumns, kStringColumns, doubles};
  return parquet_table::to_parquet(schema, rows, path);
}

void write_probes(const std::filesystem::path& path, const std::vector<ProbeRow>& rows) {
  write_file_atomically(path, probe_parquet(rows, path));
}

std::vector<ProbeRow> read_probes(const std::filesystem::path& path) {
  const parquet_table::Where where{kKind, path};
  const auto table = parquet_table::read_table(where);
  std::vector<ProbeRow> rows(static_cast<std::size_t>(table->num_rows()));
  parquet_table::read_columns(kSchema.ints, *table, where, rows);
  parquet_table::read_columns(kSchema.strings, *table, where, rows);
  parquet_table::read_columns(kSchema.doubles, *table, where, rows);
  for (const auto& c : kRhtColumns) {
    if (table->GetColumnByName(c.name)) {
      parquet_table::read_columns(std::span<const Column<ProbeRow, double>>(&c, 1), *table, where,
                                  rows);
    }
  }
  const std::array directions{kOnBaseline, kExactOnRun};
  const std::array variants{kAllGemms, kFpropOnly, kDgradOnly, kWgradOnly};
  for (const auto& row : rows) {
    check_word(row.direction, "direction", directions, path);
    check_word(row.variant, "variant", variants, path);
  }
  return rows;
}

}  // namespace fp8lab::experiments
