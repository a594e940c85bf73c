#include "experiments/results/parquet_table.hpp"

#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <fcntl.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <stdexcept>

#include "experiments/results/no_follow.hpp"

namespace fp8lab::experiments::parquet_table {

void fail(const Where& where, const std::string& what) {
  // Appends, not a "literal" + string chain: GCC 12 warns falsely (-Wrestrict) on the latter.
  std::string message = where.kind;
  message.append(" ").append(where.path.string()).append(": ").append(what);
  throw std::runtime_error(message);
}

void check(const arrow::Status& status, const Where& where, const char* doing) {
  if (!status.ok()) fail(where, std::string(doing) + ": " + status.ToString());
}

std::string table_bytes(const arrow::Table& table, const Where& where) {
  // Into memory: the caller writes the bytes through the one atomic writer of results files.
  auto sink = take(arrow::io::BufferOutputStream::Create(), where, "opening a buffer");
  const auto properties =
      parquet::WriterProperties::Builder().compression(parquet::Compression::ZSTD)->build();
  check(parquet::arrow::WriteTable(table, arrow::default_memory_pool(), sink,
                                   parquet::DEFAULT_MAX_ROW_GROUP_LENGTH, properties),
        where, "writing Parquet");
  const auto buffer = take(sink->Finish(), where, "closing the buffer");
  return buffer->ToString();
}

std::shared_ptr<arrow::Table> read_table(const Where& where) {
  // Opened by fp8lab (no_follow.hpp: a regular file, no link), then handed to Arrow, which closes it.
  // Its errors (missing, a FIFO, a link) are the sidecar's: the report names the sidecar.
  int fd = -1;
  try {
    fd = open_regular_at(nullptr, where.path, O_RDONLY, 0).release();
  } catch (const std::exception& e) {
    fail(where, e.what());
  }
  auto file = take(arrow::io::ReadableFile::Open(fd), where, "opening");
  auto reader = take(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), where,
                     "not a Parquet file");
  return take(reader->ReadTable(), where, "reading");
}

}  // namespace fp8lab::experiments::parquet_table
