#include "experiments/results/baseline_archive.hpp"

#include <zlib.h>

#include <cstdio>
#include <limits>
#include <sstream>
#include <vector>

#include "experiments/results/no_follow.hpp"

namespace fp8lab::experiments {
namespace {

// Little-endian fields read within bounds: every read checks the offset, so no input makes the
// check read outside `bytes`.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t size() const { return bytes_.size(); }
  bool has(std::uint64_t offset, std::uint64_t length) const {
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }
  std::uint64_t field(std::uint64_t offset, int length) const {
    std::uint64_t value = 0;
    for (int i = length - 1; i >= 0; --i) {
      value = (value << 8) | static_cast<unsigned char>(bytes_[offset + static_cast<unsigned>(i)]);
    }
    return value;
  }
  std::string_view slice(std::uint64_t offset, std::uint64_t length) const {
    return bytes_.substr(offset, length);
  }

 private:
  std::string_view bytes_;
};

constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint32_t kLocalSignature = 0x04034b50;

std::uint32_t crc32_of(std::string_view data) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  while (!data.empty()) {
    const auto chunk = static_cast<uInt>(std::min<std::size_t>(data.size(), 1u << 30));
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(data.data()), chunk);
    data.remove_prefix(chunk);
  }
  return static_cast<std::uint32_t>(crc);
}

// The CRC-32 of a raw deflate stream's output, or nullopt when it does not inflate to exactly
// `expected_size` bytes.
std::optional<std::uint32_t> inflated_crc32(std::string_view data, std::uint64_t expected_size) {
  z_stream stream{};
  if (::inflateInit2(&stream, -MAX_WBITS) != Z_OK) return std::nullopt;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(std::min<std::size_t>(data.size(), UINT32_MAX));
  std::vector<unsigned char> buffer(1 << 16);
  uLong crc = ::crc32(0L, Z_NULL, 0);
  std::uint64_t produced = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = buffer.data();
    stream.avail_out = static_cast<uInt>(buffer.size());
    status = ::inflate(&stream, Z_NO_FLUSH);
    const auto n = buffer.size() - stream.avail_out;
    produced += n;
    if (produced > expected_size) break;
    crc = ::crc32(crc, buffer.data(), static_cast<uInt>(n));
    if (status == Z_BUF_ERROR && stream.avail_in == 0) break;
  }
  ::inflateEnd(&stream);
  if (status != Z_STREAM_END || produced != expected_size) return std::nullopt;
  return static_cast<std::uint32_t>(crc);
}

std::string hex32(std::uint64_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::optional<std::string> zip_archive_problem(std::string_view bytes) {
  const Reader zip(bytes);
  if (zip.size() < 22) {
    return "truncated or not a zip archive: " + std::to_string(zip.size()) +
           " bytes, fewer than a zip's 22-byte end record";
  }
  // The end record: the last 22 bytes, or earlier by a comment of up to 65535 bytes.
  std::optional<std::uint64_t> end;
  const std::uint64_t lowest = zip.size() > 22 + 65535 ? zip.size() - 22 - 65535 : 0;
  for (std::uint64_t at = zip.size() - 22;; --at) {
    if (zip.field(at, 4) == kEndSignature && at + 22 + zip.field(at + 20, 2) == zip.size()) {
      end = at;
      break;
    }
    if (at == lowest) break;
  }
  if (!end) return std::string("truncated or not a zip archive: no end-of-archive record");
  std::uint64_t entries = zip.field(*end + 10, 2);
  std::uint64_t directory_size = zip.field(*end + 12, 4);
  std::uint64_t directory_offset = zip.field(*end + 16, 4);
  std::uint64_t directory_end = *end;
  // zip64 (LibTorch's writer adds it to every archive): a locator just before the end record
  // points at the zip64 end record, which holds the real counts and follows the directory.
  const bool located = *end >= 20 && zip.field(*end - 20, 4) == kZip64LocatorSignature;
  if (!located &&
      (entries == 0xffff || directory_size == 0xffffffff || directory_offset == 0xffffffff)) {
    return std::string("zip64 end record expected but its locator is missing");
  }
  if (located) {
    const std::uint64_t at = zip.field(*end - 20 + 8, 8);
    if (!zip.has(at, 56) || zip.field(at, 4) != kZip64EndSignature) {
      return "zip64 end record expected at offset " + std::to_string(at) + " but not found";
    }
    entries = zip.field(at + 32, 8);
    directory_size = zip.field(at + 40, 8);
    directory_offset = zip.field(at + 48, 8);
    directory_end = at;
  }
  if (entries == 0) return std::string("the archive holds no entries");
  if (directory_offset > directory_end || directory_size != directory_end - directory_offset) {
    return "central directory (offset " + std::to_string(directory_offset) + ", " +
           std::to_string(directory_size) + " bytes) does not end where the end record begins (" +
           std::to_string(directory_end) + ")";
  }
  std::uint64_t at = directory_offset;
  for (std::uint64_t i = 0; i < entries; ++i) {
    const std::string which = "entry " + std::to_string(i + 1) + " of " + std::to_string(entries);
    if (!zip.has(at, 46) || at + 46 > directory_end || zip.field(at, 4) != kCentralSignature) {
      return which + ": no central directory header at offset " + std::to_string(at);
    }
    const std::uint64_t method = zip.field(at + 10, 2);
    const std::uint64_t crc = zip.field(at + 16, 4);
    std::uint64_t packed = zip.field(at + 20, 4), size = zip.field(at + 24, 4);
    const std::uint64_t name_length = zip.field(at + 28, 2), extra_length = zip.field(at + 30, 2);
    const std::uint64_t comment_length = zip.field(at + 32, 2);
    std::uint64_t local = zip.field(at + 42, 4);
    const std::uint64_t next = at + 46 + name_length + extra_length + comment_length;
    if (next > directory_end) return which + ": its header runs past the central directory";
    const std::string name(zip.slice(at + 46, name_length));
    // zip64 sizes and offset, in this order, for each field saturated in the header.
    std::uint64_t extra = at + 46 + name_length;
    const std::uint64_t extra_end = extra + extra_length;
    while (extra + 4 <= extra_end) {
      const std::uint64_t id = zip.field(extra, 2), length = zip.field(extra + 2, 2);
      if (extra + 4 + length > extra_end) return which + " (" + name + "): bad extra field";
      if (id == 0x0001) {
        std::uint64_t p = extra + 4;
        for (std::uint64_t* value : {&size, &packed, &local}) {
          if (*value != 0xffffffff) continue;
          if (p + 8 > extra + 4 + length) return which + " (" + name + "): short zip64 field";
          *value = zip.field(p, 8);
          p += 8;
        }
      }
      extra += 4 + length;
    }
    if (!zip.has(local, 30) || zip.field(local, 4) != kLocalSignature) {
      return which + " (" + name + "): no local header at offset " + std::to_string(local);
    }
    const std::uint64_t data = local + 30 + zip.field(local + 26, 2) + zip.field(local + 28, 2);
    if (data > directory_offset || packed > directory_offset - data) {
      return which + " (" + name + "): its " + std::to_string(packed) + " bytes at offset " +
             std::to_string(data) + " run past the entries (truncated?)";
    }
    const auto content = zip.slice(data, packed);
    std::optional<std::uint32_t> actual;
    if (method == 0) {
      if (packed != size) return which + " (" + name + "): stored entry with two sizes";
      actual = crc32_of(content);
    } else if (method == 8) {
      actual = inflated_crc32(content, size);
      if (!actual)
        return which + " (" + name + "): does not inflate to its " + std::to_string(size) +
               " bytes";
    } else {
      return which + " (" + name + "): compression method " + std::to_string(method) +
             " is not one LibTorch writes";
    }
    if (*actual != crc) {
      return which + " (" + name + "): CRC-32 " + hex32(*actual) + " of its data, " + hex32(crc) +
             " recorded";
    }
    at = next;
  }
  return std::nullopt;
}

nlohmann::json archive_fingerprint(std::string_view bytes) {
  return {{"bytes", bytes.size()}, {"crc32", hex32(crc32_of(bytes))}};
}

std::optional<std::string> baseline_archive_problem(const std::filesystem::path& path,
                                                    const nlohmann::json& record) {
  // A FIFO, device or directory there throws NotARegularFile (no_follow.hpp), naming it.
  const auto read = read_regular_file(path);
  if (!read) return std::string("does not exist");
  const std::string& bytes = *read;
  if (auto problem = zip_archive_problem(bytes)) return problem;
  if (record.is_object() && record.contains("baseline_archive")) {
    const auto fingerprint = archive_fingerprint(bytes);
    if (record["baseline_archive"] != fingerprint) {
      return "is " + fingerprint.dump() + ", its record says " + record["baseline_archive"].dump() +
             " (another run's file, or a partial copy?)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> set_aside_bad_baseline(const ResultsDirectory& directory,
                                                  const RunRecordFile& file) {
  if (!file.record || (*file.record)["kind"] != "baseline" ||
      (*file.record)["status"] != "finished") {
    return std::nullopt;
  }
  const auto id = (*file.record)["run_id"].get<std::string>();
  const auto archive = directory.baseline_trajectory_path(id);
  const auto problem = baseline_archive_problem(archive, *file.record);
  if (!problem) return std::nullopt;
  std::string message = archive.string() + ": " + *problem + "; the baseline runs again (record ";
  message += directory.set_aside(file.path).string();
  if (std::filesystem::exists(archive)) {
    message += ", archive " + directory.set_aside(archive).string();
  }
  return message + " kept aside)";
}

}  // namespace fp8lab::experiments
