// NumPy's .npy files (format versions 1.0-3.0, numpy/lib/format.py): the magic "\x93NUMPY", a
// version, a header length, and a Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (R, C), } padded with spaces to a multiple of 64 bytes and ended by '\n'; then the
// array's bytes. Written here rather than taken from a library: Debian packages none (cnpy and
// libnpy are not in it), and what `fp8lab quantize` needs is small and strict: refuse every file
// it cannot read exactly, naming the field and what is accepted. No LibTorch.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp8lab::experiments::cli {

// A .npy file fp8lab cannot take: the message names the file, the field and what is accepted.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A float32 matrix, row-major.
struct Float32Matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float> values;
};

// Reads `path`: descr '<f4' (little-endian float32), fortran_order False, shape (R, C) or (C,)
// (one row), R and C >= 1, and exactly R * C * 4 bytes of data after the header. Throws NpyError
// otherwise (a wrong dtype, order or shape, a bad magic or version, a header that is not the dict
// numpy writes, a short or long file, a file that is not a regular file or cannot be read).
Float32Matrix read_npy_float32(const std::string& path);

// The whole .npy file (version 1.0) of an array with NumPy dtype `descr` ('|u1', '<f4') and
// `shape` whose C-order bytes are `data` (data.size() == product(shape) * itemsize).
std::string npy_file(const std::string& descr, const std::vector<std::int64_t>& shape,
                     const void* data, std::size_t bytes);

}  // namespace fp8lab::experiments::cli
