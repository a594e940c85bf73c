// A sidecar's rows as one Parquet table and back, for any row struct whose columns are int64,
// string and double members: each sidecar (layer_stats_sidecar.cpp, probe_sidecar.cpp) names its
// columns once, in a Schema, for the writer and the reader alike.
//
// Internal to experiments/results/: the sidecar .cpp files are the only ones that include this
// header, and with it Arrow and Parquet (cmake/fp8lab_arrow.cmake); their public headers do not.
#pragma once

#include <arrow/api.h>
#include <arrow/type_traits.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace fp8lab::experiments::parquet_table {

template <typename Row, typename T>
struct Column {
  const char* name;
  T Row::*member;
};

// The columns by C++ type, in the file's order (int64, then string, then double); `kind` names the
// sidecar in errors ("layer statistics sidecar").
template <typename Row>
struct Schema {
  const char* kind;
  std::span<const Column<Row, std::int64_t>> ints;
  std::span<const Column<Row, std::string>> strings;
  std::span<const Column<Row, double>> doubles;
};

// Where an error happens: the sidecar's kind and file.
struct Where {
  const char* kind;
  const std::filesystem::path& path;
};
[[noreturn]] void fail(const Where& where, const std::string& what);
void check(const arrow::Status& status, const Where& where, const char* doing);
template <typename T>
T take(arrow::Result<T> result, const Where& where, const char* doing) {
  check(result.status(), where, doing);
  return std::move(result).ValueUnsafe();
}

// `table` as the bytes of a Parquet file (ZSTD).
std::string table_bytes(const arrow::Table& table, const Where& where);
// The Parquet file at `path` (a regular file, no link: no_follow.hpp) as a table.
std::shared_ptr<arrow::Table> read_table(const Where& where);

// How a column of C++ type T is stored: Arrow's own traits (int64, utf8, float64) give its type,
// builder and array.
template <typename T>
using ArrowOf = arrow::CTypeTraits<T>;

template <typename Row, typename T>
void add_columns(std::span<const Column<Row, T>> columns, const std::vector<Row>& rows,
                 const Where& where, std::vector<std::shared_ptr<arrow::Field>>& fields,
                 std::vector<std::shared_ptr<arrow::Array>>& arrays) {
  for (const auto& c : columns) {
    fields.push_back(arrow::field(c.name, ArrowOf<T>::type_singleton(), /*nullable=*/false));
    typename ArrowOf<T>::BuilderType builder;
    check(builder.Reserve(static_cast<std::int64_t>(rows.size())), where, "reserving a column");
    for (const auto& row : rows) check(builder.Append(row.*c.member), where, "appending a value");
    arrays.push_back(take(builder.Finish(), where, "finishing a column"));
  }
}

// The column `name` of `table` as one array of type T's Arrow array, or a clear error.
template <typename T>
std::shared_ptr<typename ArrowOf<T>::ArrayType> column(const arrow::Table& table, const char* name,
                                                       const Where& where) {
  const auto& type = ArrowOf<T>::type_singleton();
  const auto chunked = table.GetColumnByName(name);
  if (!chunked) fail(where, std::string("no column '") + name + "'");
  if (!chunked->type()->Equals(*type)) {
    fail(where, std::string("column '") + name + "' is " + chunked->type()->ToString() +
                    ", expected " + type->ToString());
  }
  if (chunked->null_count() != 0) fail(where, std::string("column '") + name + "' holds nulls");
  auto combined = take(arrow::Concatenate(chunked->chunks()), where, "reading a column");
  return std::static_pointer_cast<typename ArrowOf<T>::ArrayType>(combined);
}

template <typename Row, typename T>
void read_columns(std::span<const Column<Row, T>> columns, const arrow::Table& table,
                  const Where& where, std::vector<Row>& rows) {
  for (const auto& c : columns) {
    const auto values = column<T>(table, c.name, where);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].*c.member = T(values->GetView(static_cast<std::int64_t>(i)));
    }
  }
}

// `rows` as the bytes of one Parquet file.
template <typename Row>
std::string to_parquet(const Schema<Row>& schema, const std::vector<Row>& rows,
                       const std::filesystem::path& path) {
  const Where where{schema.kind, path};
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  add_columns(schema.ints, rows, where, fields, arrays);
  add_columns(schema.strings, rows, where, fields, arrays);
  add_columns(schema.doubles, rows, where, fields, arrays);
  const auto table =
      arrow::Table::Make(arrow::schema(fields), arrays, static_cast<std::int64_t>(rows.size()));
  return table_bytes(*table, where);
}

// The rows of the Parquet file at `path`.
template <typename Row>
std::vector<Row> from_parquet(const Schema<Row>& schema, const std::filesystem::path& path) {
  const Where where{schema.kind, path};
  const auto table = read_table(where);
  std::vector<Row> rows(static_cast<std::size_t>(table->num_rows()));
  read_columns(schema.ints, *table, where, rows);
  read_columns(schema.strings, *table, where, rows);
  read_columns(schema.doubles, *table, where, rows);
  return rows;
}

}  // namespace fp8lab::experiments::parquet_table
