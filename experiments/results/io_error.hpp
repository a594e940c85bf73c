// A failure of the machine while fp8lab reads or writes its files (a full disk, a quota, an I/O
// error): an *error* of the run or sweep, never a result (docs/architecture.md, "Errors and
// results"). Whoever catches one records no run record for it: the run is rerun by --resume. No
// LibTorch.
#pragma once

#include <cctype>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fp8lab::experiments {

// errno's message in lower case ("no space left on device"): the cause that the closing line of a
// sweep counts ("3 runs errored (2 no space left on device, 1 killed by signal 9)").
inline std::string errno_cause(int error_number) {
  std::string text = std::strerror(error_number);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

class IoError : public std::runtime_error {
 public:
  // "<what> <path>: <strerror>", e.g. "cannot write runs/.x.json.tmp...: No space left on device".
  IoError(const std::string& what, int error_number)
      : std::runtime_error(what + ": " + std::strerror(error_number)),
        error_number_(error_number) {}
  int error_number() const { return error_number_; }
  std::string cause() const { return errno_cause(error_number_); }

 private:
  int error_number_;
};

}  // namespace fp8lab::experiments
