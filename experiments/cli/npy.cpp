#include "experiments/cli/npy.hpp"

#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "sim/element_count.hpp"

namespace fp8lab::experiments::cli {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy.cpp reads '<f4' and '<V2' as native words");

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
// More than any header numpy writes for a 2-D array; a longer one is not worth parsing.
constexpr std::size_t kMaxHeader = 1 << 16;

[[noreturn]] void refuse(const std::string& path, const std::string& problem) {
  throw NpyError("--in '" + path + "': " + problem);
}

// The Python literal of the header, read just far enough for the three keys numpy writes.
class HeaderParser {
 public:
  HeaderParser(std::string text, std::string path) : s_(std::move(text)), path_(std::move(path)) {}

  void expect(char c) {
    skip_space();
    if (i_ >= s_.size() || s_[i_] != c) {
      fail(std::string("expected '") + c + "' at header offset " + std::to_string(i_));
    }
    ++i_;
  }
  bool accept(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  std::string string_literal() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail("expected a quoted string");
    const char quote = s_[i_++];
    const auto end = s_.find(quote, i_);
    if (end == std::string::npos) fail("an unterminated string");
    std::string out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.compare(i_, std::strlen(word), word) == 0) return i_ += std::strlen(word), value;
    }
    fail("fortran_order is neither True nor False");
  }
  std::vector<std::int64_t> shape() {
    expect('(');
    std::vector<std::int64_t> dims;
    while (!accept(')')) {
      skip_space();
      std::int64_t v = 0;
      const std::size_t start = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("a dimension too large");
        v = v * 10 + (s_[i_++] - '0');
      }
      if (i_ == start) fail("shape holds something other than whole numbers");
      dims.push_back(v);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }
  void finish() {
    skip_space();
    if (i_ != s_.size()) fail("text after the dict");
  }
  [[noreturn]] void fail(const std::string& what) const {
    refuse(path_, "the header is not the dict numpy writes (" + what + "): " + s_);
  }

 private:
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::string s_;
  std::string path_;
  std::size_t i_ = 0;
};

}  // namespace

Float32Stack read_npy_stack(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) refuse(path, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(path, "cannot be opened for reading");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) refuse(path, "could not be read to its end");

  const auto u8 = [&](std::size_t at) { return static_cast<unsigned char>(bytes[at]); };
  if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    refuse(path, "not a .npy file (it does not start with \\x93NUMPY); accepted: np.save's files");
  }
  const int major = u8(6), minor = u8(7);
  if (major < 1 || major > 3 || minor != 0) {
    refuse(path, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                     "; accepted: 1.0, 2.0, 3.0");
  }
  std::size_t length = 0, start = 0;
  if (major == 1) {
    length = u8(8) | (std::size_t{u8(9)} << 8);
    start = 10;
  } else {
    if (bytes.size() < 12) refuse(path, "ends inside its header length");
    length = u8(8) | (std::size_t{u8(9)} << 8) | (std::size_t{u8(10)} << 16) |
             (std::size_t{u8(11)} << 24);
    start = 12;
  }
  if (length > kMaxHeader) {
    refuse(path, "a header of " + std::to_string(length) + " bytes; accepted: up to " +
                     std::to_string(kMaxHeader));
  }
  if (bytes.size() < start + length) {
    refuse(path, "ends inside its header (" + std::to_string(bytes.size()) + " bytes, header to " +
                     std::to_string(start + length) + ")");
  }
  HeaderParser p(bytes.substr(start, length), path);
  std::string descr;
  bool fortran = false, have_descr = false, have_order = false, have_shape = false;
  std::vector<std::int64_t> shape;
  p.expect('{');
  while (!p.accept('}')) {
    const std::string key = p.string_literal();
    p.expect(':');
    if (key == "descr") {
      descr = p.string_literal(), have_descr = true;
    } else if (key == "fortran_order") {
      fortran = p.boolean(), have_order = true;
    } else if (key == "shape") {
      shape = p.shape(), have_shape = true;
    } else {
      p.fail("unknown key '" + key + "'");
    }
    if (!p.accept(',')) {
      p.expect('}');
      break;
    }
  }
  p.finish();
  if (!have_descr || !have_order || !have_shape) {
    p.fail("it needs descr, fortran_order and shape");
  }
  const bool bf16 = descr == "<V2";
  if (descr != "<f4" && !bf16) {
    refuse(path, "dtype '" + descr +
                     "'; accepted: '<f4' (little-endian float32) or '<V2' (bfloat16 as "
                     "ml_dtypes saves it: np.save(f, x.astype(ml_dtypes.bfloat16)))");
  }
  if (fortran) {
    refuse(path, "fortran_order True; accepted: C order (np.ascontiguousarray(x))");
  }
  if (shape.empty() || shape.size() > 3) {
    refuse(path, std::to_string(shape.size()) +
                     " dimensions; accepted: 1 (one row), 2 (rows, cols) or 3 (a stack: "
                     "tensors, rows, cols)");
  }
  Float32Stack m;
  m.dimensions = shape.size();
  m.count = shape.size() == 3 ? shape[0] : 1;
  m.rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
  m.cols = shape.back();
  std::string dims;  // the file's shape as numpy prints it
  for (std::size_t i = 0; i < shape.size(); ++i)
    dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  for (const std::int64_t d : shape) {
    if (d < 1) refuse(path, "shape (" + dims + ") is empty; accepted: every dimension >= 1");
  }
  try {
    sim::checked_element_count("--in", m.rows, m.cols);
    sim::checked_element_count("--in", m.count, m.rows * m.cols);
  } catch (const std::exception& e) {
    refuse(path, e.what());
  }
  const std::size_t n = static_cast<std::size_t>(m.count * m.rows * m.cols);
  const std::size_t itemsize = bf16 ? 2 : 4;
  const std::size_t data = bytes.size() - start - length;
  if (n > std::numeric_limits<std::size_t>::max() / 4 || data != n * itemsize) {
    refuse(path, "holds " + std::to_string(data) + " data bytes; its shape (" + dims + ") of " +
                     (bf16 ? "bfloat16" : "float32") + " needs " + std::to_string(n * itemsize));
  }
  m.values.resize(n);
  const char* first = bytes.data() + start + length;
  if (bf16) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t b = 0;
      std::memcpy(&b, first + 2 * i, 2);
      m.values[i] = std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
    }
    return m;
  }
  std::memcpy(m.values.data(), first, data);
  return m;
}

std::string npy_file(const std::string& descr, const std::vector<std::int64_t>& shape,
                     const void* data, std::size_t bytes) {
  std::string dims;  // Python's tuple: (3,) but (3, 4)
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims +
                       "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

}  // namespace fp8lab::experiments::cli
