// Writes sim's code for every input bit pattern, in order, as raw bytes on stdout, for the Python
// oracle tests (cast_subbyte_ml_dtypes_oracle.py) that compare them with ml_dtypes and torchao:
//   sim_subbyte_codes FORMAT MODE INPUT [BEGIN END STRIDE]
//   FORMAT e2m1 | e2m3 | e3m2; MODE a name of kSubbyteModes (sim/cast.hpp);
//   INPUT fp32 (2^32 patterns) | bf16 (2^16 patterns, cast through their exact fp32 value);
//   BEGIN END STRIDE (default 0, 2^32 or 2^16, 1): the patterns BEGIN, BEGIN + STRIDE, ... < END.
// Bad arguments: a message naming the argument and what is accepted, exit 2.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cast.hpp"
#include "tests/sim/program_args.hpp"

namespace {

using namespace fp8lab::sim;

const fp8lab::testing::ProgramArgs kArgs(
    "sim_subbyte_codes", "e2m1|e2m3|e3m2 cuda|ml_dtypes|torchao|te_reference fp32|bf16 "
                         "[BEGIN END STRIDE]");

std::uint64_t parse_count(const char* what, const char* text, std::uint64_t limit) {
  return static_cast<std::uint64_t>(
      kArgs.integer(what, text, 0, static_cast<std::int64_t>(limit), /*base=*/0));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 7)
    kArgs.fail("expected 3 or 6 arguments, got " + std::to_string(argc - 1));
  const std::string_view format_name = argv[1], mode_name = argv[2], input = argv[3];
  Format format{};
  bool format_found = false;
  for (const Format f : {Format::E2M1, Format::E2M3, Format::E3M2}) {
    if (format_name == spec(f).name) format = f, format_found = true;
  }
  if (!format_found)
    kArgs.fail("FORMAT '" + std::string(format_name) + "' is not e2m1, e2m3 or e3m2");
  const SubbyteSpecials* mode = nullptr;
  for (const auto& named : kSubbyteModes) {
    if (mode_name == named.name) mode = &named.specials;
  }
  if (mode == nullptr)
    kArgs.fail("MODE '" + std::string(mode_name) + "' is not a kSubbyteModes name");
  if (input != "fp32" && input != "bf16") {
    kArgs.fail("INPUT '" + std::string(input) + "' is not fp32 or bf16");
  }
  const bool bf16 = input == "bf16";
  const std::uint64_t patterns = bf16 ? (1ull << 16) : (1ull << 32);
  std::uint64_t begin = 0, end = patterns, stride = 1;
  if (argc == 7) {
    begin = parse_count("BEGIN", argv[4], patterns);
    end = parse_count("END", argv[5], patterns);
    stride = parse_count("STRIDE", argv[6], patterns);
    if (stride == 0) kArgs.fail("STRIDE must be >= 1");
  }

  std::vector<std::uint8_t> buffer;
  buffer.reserve(1u << 20);
  for (std::uint64_t i = begin; i < end; i += stride) {
    const auto bits = static_cast<std::uint32_t>(i);
    const float x = bf16 ? bf16_to_fp32(static_cast<std::uint16_t>(bits))
                         : std::bit_cast<float>(bits);
    buffer.push_back(cast_fp32_to_subbyte(x, format, *mode));
    if (buffer.size() == buffer.capacity()) {
      if (std::fwrite(buffer.data(), 1, buffer.size(), stdout) != buffer.size()) return 1;
      buffer.clear();
    }
  }
  if (std::fwrite(buffer.data(), 1, buffer.size(), stdout) != buffer.size()) return 1;
  return std::fflush(stdout) == 0 ? 0 : 1;
}
