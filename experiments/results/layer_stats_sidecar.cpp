// The one file that includes Arrow and Parquet (cmake/fp8lab_arrow.cmake). Each column is named
// once, in the tables below, for the writer and the reader alike.
#include "experiments/results/layer_stats_sidecar.hpp"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/type_traits.h>
#include <fcntl.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <stdexcept>
#include <utility>

#include "experiments/results/no_follow.hpp"
#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {
namespace {

template <typename T>
struct Column {
  const char* name;
  T LayerStatsRow::*member;
};

// The sidecar's columns by C++ type, in the file's order (int64, then string, then double). Each
// is written once: its Parquet name is its LayerStatsRow member's name.
#define FP8LAB_COLUMN(member) \
  { #member, &LayerStatsRow::member }
constexpr Column<std::int64_t> kIntColumns[] = {
    FP8LAB_COLUMN(step),        FP8LAB_COLUMN(quantizations), FP8LAB_COLUMN(count),
    FP8LAB_COLUMN(underflowed), FP8LAB_COLUMN(saturated),     FP8LAB_COLUMN(nan)};
constexpr Column<std::string> kStringColumns[] = {FP8LAB_COLUMN(layer), FP8LAB_COLUMN(tensor),
                                                  FP8LAB_COLUMN(gemm), FP8LAB_COLUMN(copy),
                                                  FP8LAB_COLUMN(recipe)};
constexpr Column<double> kDoubleColumns[] = {
    FP8LAB_COLUMN(underflow_pct), FP8LAB_COLUMN(overflow_pct),
    FP8LAB_COLUMN(sqnr_db),       FP8LAB_COLUMN(mse),
    FP8LAB_COLUMN(amax),          FP8LAB_COLUMN(scale_inv_min),
    FP8LAB_COLUMN(scale_inv_max), FP8LAB_COLUMN(max_block_dynamic_range_log2),
    FP8LAB_COLUMN(kurtosis)};
#undef FP8LAB_COLUMN

// How a column of C++ type T is stored: Arrow's own traits (int64, utf8, float64) give its type,
// builder and array.
template <typename T>
using ArrowOf = arrow::CTypeTraits<T>;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  // Appends, not a "literal" + string chain: GCC 12 warns falsely (-Wrestrict) on the latter.
  std::string message = "layer statistics sidecar ";
  message.append(path.string()).append(": ").append(what);
  throw std::runtime_error(message);
}

void check(const arrow::Status& status, const std::filesystem::path& path, const char* doing) {
  if (!status.ok()) fail(path, std::string(doing) + ": " + status.ToString());
}
template <typename T>
T take(arrow::Result<T> result, const std::filesystem::path& path, const char* doing) {
  check(result.status(), path, doing);
  return std::move(result).ValueUnsafe();
}

// The columns of one C++ type: their fields and their Arrow arrays of `rows`, appended.
template <typename T, std::size_t N>
void add_columns(const Column<T> (&columns)[N], const std::vector<LayerStatsRow>& rows,
                 const std::filesystem::path& path,
                 std::vector<std::shared_ptr<arrow::Field>>& fields,
                 std::vector<std::shared_ptr<arrow::Array>>& arrays) {
  for (const auto& c : columns) {
    fields.push_back(arrow::field(c.name, ArrowOf<T>::type_singleton(), /*nullable=*/false));
    typename ArrowOf<T>::BuilderType builder;
    check(builder.Reserve(static_cast<std::int64_t>(rows.size())), path, "reserving a column");
    for (const auto& row : rows) check(builder.Append(row.*c.member), path, "appending a value");
    arrays.push_back(take(builder.Finish(), path, "finishing a column"));
  }
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

// The columns of one C++ type of `table` into `rows` (sized to the table's rows).
template <typename T, std::size_t N>
void read_columns(const Column<T> (&columns)[N], const arrow::Table& table,
                  const std::filesystem::path& path, std::vector<LayerStatsRow>& rows) {
  for (const auto& c : columns) {
    const auto values =
        column<typename ArrowOf<T>::ArrayType>(table, c.name, ArrowOf<T>::type_singleton(), path);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].*c.member = T(values->GetView(static_cast<std::int64_t>(i)));
    }
  }
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
  add_columns(kIntColumns, rows, path, fields, arrays);
  add_columns(kStringColumns, rows, path, fields, arrays);
  add_columns(kDoubleColumns, rows, path, fields, arrays);
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
  // Its errors (missing, a FIFO, a link) are the sidecar's: the report names the sidecar.
  int fd = -1;
  try {
    fd = open_regular_at(nullptr, path, O_RDONLY, 0).release();
  } catch (const std::exception& e) {
    fail(path, e.what());
  }
  auto file = take(arrow::io::ReadableFile::Open(fd), path, "opening");
  auto reader = take(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), path,
                     "not a Parquet file");
  const auto table = take(reader->ReadTable(), path, "reading");
  std::vector<LayerStatsRow> rows(static_cast<std::size_t>(table->num_rows()));
  read_columns(kIntColumns, *table, path, rows);
  read_columns(kStringColumns, *table, path, rows);
  read_columns(kDoubleColumns, *table, path, rows);
  return rows;
}

}  // namespace fp8lab::experiments
