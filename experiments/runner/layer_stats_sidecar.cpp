// The one file that includes Arrow and Parquet (cmake/fp8lab_arrow.cmake). Each column is named
// once, in the tables below, for the writer and the reader alike.
#include "experiments/runner/layer_stats_sidecar.hpp"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <fcntl.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <array>
#include <stdexcept>
#include <utility>

#include "experiments/runner/no_follow.hpp"
#include "experiments/runner/results_store.hpp"

namespace fp8lab::experiments {
namespace {

template <typename T>
struct Column {
  const char* name;
  T LayerStatsRow::*member;
};

constexpr std::array<Column<std::string>, 5> kStringColumns{{
    {"layer", &LayerStatsRow::layer},
    {"tensor", &LayerStatsRow::tensor},
    {"gemm", &LayerStatsRow::gemm},
    {"copy", &LayerStatsRow::copy},
    {"recipe", &LayerStatsRow::recipe},
}};
constexpr std::array<Column<std::int64_t>, 6> kIntColumns{{
    {"step", &LayerStatsRow::step},
    {"quantizations", &LayerStatsRow::quantizations},
    {"count", &LayerStatsRow::count},
    {"underflowed", &LayerStatsRow::underflowed},
    {"saturated", &LayerStatsRow::saturated},
    {"nan", &LayerStatsRow::nan},
}};
constexpr std::array<Column<double>, 9> kDoubleColumns{{
    {"underflow_pct", &LayerStatsRow::underflow_pct},
    {"overflow_pct", &LayerStatsRow::overflow_pct},
    {"sqnr_db", &LayerStatsRow::sqnr_db},
    {"mse", &LayerStatsRow::mse},
    {"amax", &LayerStatsRow::amax},
    {"scale_inv_min", &LayerStatsRow::scale_inv_min},
    {"scale_inv_max", &LayerStatsRow::scale_inv_max},
    {"max_block_dynamic_range_log2", &LayerStatsRow::max_block_dynamic_range_log2},
    {"kurtosis", &LayerStatsRow::kurtosis},
}};

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw std::runtime_error("layer statistics sidecar " + path.string() + ": " + what);
}

void check(const arrow::Status& status, const std::filesystem::path& path, const char* doing) {
  if (!status.ok()) fail(path, std::string(doing) + ": " + status.ToString());
}
template <typename T>
T take(arrow::Result<T> result, const std::filesystem::path& path, const char* doing) {
  check(result.status(), path, doing);
  return std::move(result).ValueUnsafe();
}

// One column of `rows` as an Arrow array, with the builder for its type.
template <typename Builder, typename T>
std::shared_ptr<arrow::Array> build(const std::vector<LayerStatsRow>& rows,
                                    T LayerStatsRow::*member, const std::filesystem::path& path) {
  Builder builder;
  check(builder.Reserve(static_cast<std::int64_t>(rows.size())), path, "reserving a column");
  for (const auto& row : rows) check(builder.Append(row.*member), path, "appending a value");
  return take(builder.Finish(), path, "finishing a column");
}

// The column `name` of `table` as one array of type ArrayType, or a clear error.
template <typename ArrayType>
std::shared_ptr<ArrayType> column(const arrow::Table& table, const char* name,
                                  const std::shared_ptr<arrow::DataType>& type,
                                  const std::filesystem::path& path) {
  const auto chunked = table.GetColumnByName(name);
  if (!chunked) fail(path, std::string("no column '") + name + "'");
  if (!chunked->type()->Equals(*type)) {
    fail(path, std::string("column '") + name + "' is " + chunked->type()->ToString() +
                   ", expected " + type->ToString());
  }
  if (chunked->null_count() != 0) fail(path, std::string("column '") + name + "' holds nulls");
  auto combined = take(arrow::Concatenate(chunked->chunks()), path, "reading a column");
  return std::static_pointer_cast<ArrayType>(combined);
}

}  // namespace

std::filesystem::path layer_stats_relative_path(const std::string& run_id) {
  check_run_id(run_id);
  return std::filesystem::path("layer_stats") / (run_id + ".parquet");
}

std::string layer_stats_parquet(const std::vector<LayerStatsRow>& rows,
                                const std::filesystem::path& path) {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (const auto& c : kIntColumns) {
    fields.push_back(arrow::field(c.name, arrow::int64(), /*nullable=*/false));
    arrays.push_back(build<arrow::Int64Builder>(rows, c.member, path));
  }
  for (const auto& c : kStringColumns) {
    fields.push_back(arrow::field(c.name, arrow::utf8(), false));
    arrays.push_back(build<arrow::StringBuilder>(rows, c.member, path));
  }
  for (const auto& c : kDoubleColumns) {
    fields.push_back(arrow::field(c.name, arrow::float64(), false));
    arrays.push_back(build<arrow::DoubleBuilder>(rows, c.member, path));
  }
  const auto table =
      arrow::Table::Make(arrow::schema(fields), arrays, static_cast<std::int64_t>(rows.size()));
  // Into memory, then to disk through the one atomic writer of results files.
  auto sink = take(arrow::io::BufferOutputStream::Create(), path, "opening a buffer");
  const auto properties =
      parquet::WriterProperties::Builder().compression(parquet::Compression::ZSTD)->build();
  check(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink,
                                   parquet::DEFAULT_MAX_ROW_GROUP_LENGTH, properties),
        path, "writing Parquet");
  const auto buffer = take(sink->Finish(), path, "closing the buffer");
  return buffer->ToString();
}

void write_layer_stats(const std::filesystem::path& path, const std::vector<LayerStatsRow>& rows) {
  write_file_atomically(path, layer_stats_parquet(rows, path));
}

std::vector<LayerStatsRow> read_layer_stats(const std::filesystem::path& path) {
  // Opened by fp8lab (no_follow.hpp: a regular file, no link), then handed to Arrow, which closes it.
  auto file =
      take(arrow::io::ReadableFile::Open(open_regular_at(nullptr, path, O_RDONLY, 0).release()),
           path, "opening");
  auto reader = take(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), path,
                     "not a Parquet file");
  const auto table = take(reader->ReadTable(), path, "reading");
  std::vector<LayerStatsRow> rows(static_cast<std::size_t>(table->num_rows()));
  for (const auto& c : kIntColumns) {
    const auto values = column<arrow::Int64Array>(*table, c.name, arrow::int64(), path);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].*c.member = values->Value(static_cast<std::int64_t>(i));
    }
  }
  for (const auto& c : kStringColumns) {
    const auto values = column<arrow::StringArray>(*table, c.name, arrow::utf8(), path);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].*c.member = values->GetString(static_cast<std::int64_t>(i));
    }
  }
  for (const auto& c : kDoubleColumns) {
    const auto values = column<arrow::DoubleArray>(*table, c.name, arrow::float64(), path);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].*c.member = values->Value(static_cast<std::int64_t>(i));
    }
  }
  return rows;
}

LayerStatsRow layer_stats_row(std::int64_t step, const std::string& layer, Operand tensor,
                              Gemm gemm, const std::string& recipe, const OperandStats& stats) {
  LayerStatsRow row;
  row.step = step;
  row.layer = layer;
  row.tensor = name(tensor);
  row.gemm = name(gemm);
  row.copy = sim::scaling::to_string(sim::scaling::scale_axis(gemm, tensor));
  row.recipe = recipe;
  row.quantizations = static_cast<std::int64_t>(stats.quantizations);
  row.count = static_cast<std::int64_t>(stats.count);
  row.underflowed = static_cast<std::int64_t>(stats.underflowed);
  row.saturated = static_cast<std::int64_t>(stats.saturated);
  row.nan = static_cast<std::int64_t>(stats.nan);
  row.underflow_pct = stats.underflow_pct();
  row.overflow_pct = stats.overflow_pct();
  row.sqnr_db = stats.sqnr_db();
  row.mse = stats.mse();
  row.amax = stats.amax;
  row.scale_inv_min = stats.scale_inv_min;
  row.scale_inv_max = stats.scale_inv_max;
  row.max_block_dynamic_range_log2 = stats.max_block_dynamic_range_log2;
  row.kurtosis = stats.kurtosis();
  return row;
}

}  // namespace fp8lab::experiments
