// NumPy's .npy files (format versions 1.0-3.0, numpy/lib/format.py): the magic "\x93NUMPY", a
// version, a header length, and a Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (R, C), } padded with spaces to a multiple of 64 bytes and ended by '\n'; then the
// array's bytes. Written here rather than taken from a library: Debian packages none (cnpy and
// libnpy are not in it), and what `fp8lab quantize` needs is small and strict: refuse every file
// it cannot read exactly, naming the field and what is accepted. No LibTorch: fp8lab-quantize,
// which starts without it, reads through this file.
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

// `count` float32 matrices of rows x cols, row-major one after the other.
struct Float32Stack {
  std::int64_t count = 1;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float> values;
  std::size_t dimensions = 2;  // of the file's shape: 1, 2 or 3
};

// Reads `path`: descr '<f4' (little-endian float32) or '<V2' (what ml_dtypes' bfloat16 saves as:
// numpy has no bfloat16, so np.save writes a 2-byte void; each value widens exactly to float32,
// its bits shifted up 16), fortran_order False, shape (C,) (one row), (R, C), or (T, R, C) (a
// stack of T tensors), every dimension >= 1, and exactly T * R * C * itemsize bytes of data after
// the header. Throws NpyError otherwise (a wrong dtype, order or shape, a bad magic or version, a
// header that is not the dict numpy writes, a short or long file, a file that is not a regular
// file or cannot be read), naming the file, the field and what is accepted.
Float32Stack read_npy_stack(const std::string& path);

// The whole .npy file (version 1.0) of an array with NumPy dtype `descr` ('|u1', '<f4') and
// `shape` whose C-order bytes are `data` (data.size() == product(shape) * itemsize).
std::string npy_file(const std::string& descr, const std::vector<std::int64_t>& shape,
                     const void* data, std::size_t bytes);

}  // namespace fp8lab::experiments::cli
