// fp8lab quantize (experiments/cli/quantize_command.cpp) as a user runs it: the files it writes,
// their .npy headers and shapes, hand-worked NVFP4 te bytes, the lowering's block shapes for each
// flag (rows, columns, 2-D, RHT), the refusals (exit 2, nothing written) and a failed write (exit
// 3, nothing left). The bytes against torchao 0.18 and numpy's reading of the files:
// tests/python/test_quantize_cli.py.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/cli/npy.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/refusals.hpp"

namespace fp8lab::testing {
namespace {

const std::string kFp8lab = FP8LAB_EXECUTABLE;
const std::string kFp8labQuantize = FP8LAB_QUANTIZE_EXECUTABLE;  // the same without LibTorch

// One .npy file's header dict and data.
struct Npy {
  std::string header;
  std::string data;
};
Npy read_npy(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  INFO(path << " holds " << text.size() << " bytes");
  REQUIRE(text.size() >= 10);
  REQUIRE(text.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
  const std::size_t length = static_cast<unsigned char>(text[8]) |
                             (std::size_t{static_cast<unsigned char>(text[9])} << 8);
  REQUIRE((10 + length) % 64 == 0);  // numpy's alignment
  REQUIRE(text.size() >= 10 + length);
  REQUIRE(text[10 + length - 1] == '\n');
  return {text.substr(10, length), text.substr(10 + length)};
}

void write_input(const std::filesystem::path& path, std::int64_t rows, std::int64_t cols,
                 const std::vector<float>& x) {
  write_text(path, experiments::cli::npy_file("<f4", {rows, cols}, x.data(), x.size() * 4));
}

std::vector<std::string> quantize(const std::filesystem::path& in, const std::filesystem::path& out,
                                  std::vector<std::string> flags) {
  return plus(plus({kFp8lab, "quantize"}, flags), {"--in", in.string(), "--out", out.string()});
}

std::string hex(const std::string& bytes) {
  std::string s;
  char b[4];
  for (unsigned char c : bytes) std::snprintf(b, sizeof b, "%02x ", c), s += b;
  return s;
}

TEST_CASE("nvfp4 te: the three files with hand-worked bytes") {
  Scratch dir("quantize-nvfp4");
  // One row of 32: block 0 holds the tensor amax 6, so S_enc = 2688/6 = 448, its scale
  // e4m3(6 * RN(448 * (1/6))) = 448 (0x7E) and enc_b = 1/(448 * (1/448)) = 1: the codes are the
  // values' own (6 -> 0x7, 3 -> 0x5, 1.5 -> 0x3, -0.5 -> 0x9, -6 -> 0xF), packed element 2i low.
  // Block 1 is all zero: scale 0x00 (TE emits it), codes 0.
  std::vector<float> x(32, 0.0f);
  const float head[] = {6, 3, 1.5f, -0.5f, -6, 0, 1, 2};
  std::memcpy(x.data(), head, sizeof head);
  write_input(dir / "x.npy", 1, 32, x);
  REQUIRE(run_to_end(quantize(dir / "x.npy", dir / "out", {"--format", "nvfp4", "--mode", "te"}),
                     dir / "log") == 0);
  const Npy codes = read_npy(dir / "out/codes.npy");
  CHECK_THAT(codes.header, Catch::Contains("'descr': '|u1'") &&
                               Catch::Contains("'fortran_order': False") &&
                               Catch::Contains("'shape': (1, 16)"));
  std::string expected = "\x57\x93\x0f\x42";  // (6,3) (1.5,-0.5) (-6,0) (1,2)
  expected.append(12, '\0');
  INFO("codes: " << hex(codes.data));
  CHECK(codes.data == expected);
  const Npy scales = read_npy(dir / "out/scales.npy");
  CHECK_THAT(scales.header, Catch::Contains("'descr': '|u1'") && Catch::Contains("(1, 2)"));
  CHECK(scales.data == std::string("\x7e\x00", 2));
  const Npy global = read_npy(dir / "out/global.npy");
  CHECK_THAT(global.header, Catch::Contains("'descr': '<f4'") && Catch::Contains("'shape': (3,)"));
  REQUIRE(global.data.size() == 12);
  float g[3];
  std::memcpy(g, global.data.data(), 12);
  CHECK(g[0] == 6.0f);
  CHECK(g[1] == 448.0f);
  CHECK(g[2] == 1.0f / 448.0f);
}

// A 32 x 64 tensor of distinct, sign-alternating values over a few binades.
std::vector<float> ramp(std::int64_t rows, std::int64_t cols) {
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>((i % 2 == 0 ? 1.0 : -1.0) * (1.0 + static_cast<double>(i % 97)) *
                              std::ldexp(1.0, static_cast<int>(i % 7) - 3));
  }
  return x;
}

TEST_CASE("each flag reaches the lowering's plan: shapes of the stored files") {
  Scratch dir("quantize-shapes");
  write_input(dir / "x.npy", 32, 64, ramp(32, 64));
  struct Case {
    std::vector<std::string> flags;
    std::string codes_shape, scales_shape, scales_descr;
    bool global;
  };
  const std::vector<Case> cases = {
      {{"--format", "nvfp4", "--mode", "te"}, "(32, 32)", "(32, 4)", "|u1", true},
      {{"--format", "nvfp4", "--mode", "torchao", "--axis", "columns"},
       "(64, 16)",
       "(64, 2)",
       "|u1",
       true},
      {{"--format", "nvfp4", "--mode", "te", "--2d"}, "(32, 32)", "(2, 4)", "|u1", true},
      {{"--format", "nvfp4", "--mode", "te", "--rht", "--axis", "columns"},
       "(64, 16)",
       "(64, 2)",
       "|u1",
       true},
      {{"--format", "mxfp4", "--mode", "torchao", "--rounding", "rceil"},
       "(32, 32)",
       "(32, 2)",
       "|u1",
       false},
      {{"--format", "mxfp6_e2m3", "--mode", "te", "--axis", "columns"},
       "(64, 32)",
       "(64, 1)",
       "|u1",
       false},
      {{"--format", "mxfp6_e3m2", "--mode", "torchao-main", "--rounding", "even"},
       "(32, 64)",
       "(32, 2)",
       "|u1",
       false},
      {{"--format", "mxfp8_e4m3", "--mode", "te"}, "(32, 64)", "(32, 2)", "|u1", false},
      {{"--format", "e5m2", "--mode", "torchao"}, "(32, 64)", "(1, 1)", "<f4", false},
  };
  int index = 0;
  for (const auto& c : cases) {
    const auto out = dir / ("out" + std::to_string(index++));
    const auto log = out.string() + ".log";
    INFO("flags: " << c.flags[1] << " ... (" << c.flags.size()
                   << " words); log: " << read_text(log));
    REQUIRE(run_to_end(quantize(dir / "x.npy", out, c.flags), log) == 0);
    CHECK_THAT(read_npy(out / "codes.npy").header, Catch::Contains("'shape': " + c.codes_shape));
    const Npy scales = read_npy(out / "scales.npy");
    CHECK_THAT(scales.header, Catch::Contains("'shape': " + c.scales_shape) &&
                                  Catch::Contains("'descr': '" + c.scales_descr + "'"));
    CHECK(std::filesystem::exists(out / "global.npy") == c.global);
  }
}

TEST_CASE("2-D tiles: the columns' codes are the rows' codes transposed, the RHT changes them") {
  Scratch dir("quantize-2d");
  const std::int64_t rows = 32, cols = 64;
  write_input(dir / "x.npy", rows, cols, ramp(rows, cols));
  const auto run = [&](const std::string& out, std::vector<std::string> flags) {
    REQUIRE(run_to_end(quantize(dir / "x.npy", dir / out, flags), dir / (out + ".log")) == 0);
    return read_npy(dir / out / "codes.npy").data;
  };
  const std::string by_rows = run("rows", {"--format", "nvfp4", "--mode", "te", "--2d"});
  const std::string by_cols =
      run("cols", {"--format", "nvfp4", "--mode", "te", "--2d", "--axis", "columns"});
  const auto nibble = [](const std::string& packed, std::int64_t i) {
    const auto byte = static_cast<unsigned char>(packed[static_cast<std::size_t>(i / 2)]);
    return i % 2 == 0 ? byte & 0xF : byte >> 4;
  };
  REQUIRE(by_rows.size() == by_cols.size());
  int differing = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      differing += nibble(by_rows, r * cols + c) != nibble(by_cols, c * rows + r);
    }
  }
  CHECK(differing == 0);
  // Not a constant: the codes use many of the 16 values, and the RHT changes them.
  std::vector<int> seen(16);
  for (std::int64_t i = 0; i < rows * cols; ++i)
    seen[static_cast<std::size_t>(nibble(by_rows, i))] = 1;
  CHECK(std::count(seen.begin(), seen.end(), 1) >= 12);
  const std::string plain =
      run("plain", {"--format", "nvfp4", "--mode", "te", "--axis", "columns"});
  const std::string rht =
      run("rht", {"--format", "nvfp4", "--mode", "te", "--rht", "--axis", "columns"});
  CHECK(plain != rht);
}

TEST_CASE("bad input: exit 2 naming the flag or file and what is accepted, nothing written") {
  Scratch dir("quantize-refusals");
  write_input(dir / "x.npy", 32, 64, ramp(32, 64));
  const double f64[4] = {1, 2, 3, 4};
  write_text(dir / "f64.npy", experiments::cli::npy_file("<f8", {2, 2}, f64, sizeof f64));
  const float f32[16] = {};
  write_text(dir / "4d.npy", experiments::cli::npy_file("<f4", {2, 2, 2, 1}, f32, 32));
  write_text(dir / "f16.npy", experiments::cli::npy_file("<f2", {2, 2}, f32, 8));
  std::string short_bf16 = experiments::cli::npy_file("<V2", {2, 4}, f32, 16);
  short_bf16.pop_back();
  write_text(dir / "short-bf16.npy", short_bf16);
  write_text(dir / "row16.npy", experiments::cli::npy_file("<f4", {1, 16}, f32, 64));
  write_text(dir / "rows16.npy", experiments::cli::npy_file("<f4", {2, 16}, f32, 128));
  std::string fortran = experiments::cli::npy_file("<f4", {2, 4}, f32, 32);
  fortran.replace(fortran.find("False"), 5, "True ");
  write_text(dir / "fortran.npy", fortran);
  std::string shortfile = experiments::cli::npy_file("<f4", {2, 4}, f32, 32);
  shortfile.pop_back();
  write_text(dir / "short.npy", shortfile);
  std::string badheader = experiments::cli::npy_file("<f4", {2, 4}, f32, 32);
  badheader.replace(badheader.find("'shape'"), 7, "'shapE'");
  write_text(dir / "header.npy", badheader);
  write_text(dir / "text.npy", "rows,cols\n1,2\n");
  write_text(dir / "odd.npy", experiments::cli::npy_file("<f4", {1, 3}, f32, 12));
  const std::string x = (dir / "x.npy").string(), out = (dir / "out").string();
  const auto args = [&](std::vector<std::string> flags, const std::string& in) {
    return plus(plus({"quantize"}, flags), {"--in", in, "--out", out});
  };
  const std::vector<std::string> nv = {"--format", "nvfp4", "--mode", "te"};
  const auto file = [&](const char* name) { return (dir / name).string(); };
  check_refused(
      kFp8lab,
      {
          {args({"--format", "nvfp5", "--mode", "te"}, x),
           {"--format 'nvfp5'", "accepted: nvfp4, mxfp4, mxfp6_e2m3"}},
          {args({"--format", "nvfp4", "--mode", "ao"}, x),
           {"--mode 'ao'", "accepted: te, torchao"}},
          {args({"--format", "mxfp4", "--mode", "torchao", "--rounding", "up"}, x),
           {"--rounding 'up'", "floor", "rceil"}},
          {args({"--format", "mxfp4", "--mode", "te", "--rounding", "ceil"}, x),
           {"--rounding ceil", "torchao mode"}},
          {args({"--format", "nvfp4", "--mode", "torchao", "--2d"}, x), {"--2d", "--mode te"}},
          {args({"--format", "mxfp4", "--mode", "te", "--rht"}, x), {"--rht", "--format nvfp4"}},
          {args({"--format", "e4m3", "--mode", "torchao-main"}, x),
           {"--mode torchao-main", "te, torchao, torchao-0.18"}},
          {args(plus(nv, {"--axis", "diagonal"}), x), {"--axis", "diagonal"}},
          {args({"--format", "mxfp4", "--mode", "torchao-1level"}, x),
           {"--mode torchao-1level", "--format nvfp4 only"}},
          {args(nv, file("f64.npy")), {"f64.npy", "dtype '<f8'", "accepted: '<f4'", "'<V2'"}},
          {args(nv, file("f16.npy")), {"f16.npy", "dtype '<f2'", "bfloat16 as ml_dtypes"}},
          {args(nv, file("4d.npy")),
           {"4d.npy", "4 dimensions", "accepted: 1 (one row), 2 (rows, cols) or 3 (a stack"}},
          {args(nv, file("short-bf16.npy")),
           {"short-bf16.npy", "15 data bytes", "(2, 4) of bfloat16 needs 16"}},
          {plus(args(nv, file("row16.npy")), {"--in", file("rows16.npy")}),
           {"--in '" + file("rows16.npy") + "'", "tensors of 2 x 16",
            "accepted: those of the first file", "1 x 16", "ragged"}},
          {args(nv, file("fortran.npy")), {"fortran.npy", "fortran_order", "C order"}},
          {args(nv, file("short.npy")), {"short.npy", "31 data bytes", "needs 32"}},
          {args(nv, file("header.npy")), {"header.npy", "unknown key 'shapE'"}},
          {args(nv, file("text.npy")), {"text.npy", "not a .npy file"}},
          {args(nv, file("odd.npy")), {"odd.npy", "3 codes", "an even count"}},
          {args(nv, file("absent.npy")), {"--in", "absent.npy"}},
          {args(plus(nv, {"--rht"}), file("odd.npy")), {"--rht", "odd.npy", "16"}},
      },
      dir.path(), dir / "out");
  // fp8lab-quantize refuses as fp8lab quantize does, its own name first.
  check_refused(kFp8labQuantize,
                {{{"--format", "nvfp4", "--mode", "te", "--in", file("f64.npy"), "--out", out},
                  {"fp8lab-quantize: --in", "f64.npy", "accepted: '<f4'"}},
                 {{"--format", "nvfp4", "--in", x, "--out", out}, {"--mode"}}},
                dir.path(), dir / "out");
}

// bf16 bits of an fp32 value that bf16 holds exactly.
std::uint16_t bf16_bits(float v) {
  std::uint32_t u = 0;
  std::memcpy(&u, &v, 4);
  REQUIRE((u & 0xFFFFu) == 0);
  return static_cast<std::uint16_t>(u >> 16);
}

TEST_CASE("a bf16 .npy (ml_dtypes' '<V2') gives the bytes of its exact fp32 widening") {
  Scratch dir("quantize-bf16");
  std::vector<float> x = ramp(32, 64);  // (1 + i % 97) * 2^k: 7 significant bits, bf16-exact
  std::vector<std::uint16_t> b(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) b[i] = bf16_bits(x[i]);
  write_input(dir / "x.npy", 32, 64, x);
  write_text(dir / "b.npy", experiments::cli::npy_file("<V2", {32, 64}, b.data(), b.size() * 2));
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--format", "nvfp4", "--mode", "te"},
           {"--format", "mxfp8_e4m3", "--mode", "torchao", "--axis", "columns"},
           {"--format", "e4m3", "--mode", "te"}}) {
    INFO(flags[1]);
    REQUIRE(run_to_end(quantize(dir / "x.npy", dir / "f32", flags), dir / "f32.log") == 0);
    REQUIRE(run_to_end(quantize(dir / "b.npy", dir / "bf16", flags), dir / "bf16.log") == 0);
    for (const char* name : {"codes.npy", "scales.npy"}) {
      CHECK(read_text(dir / "f32" / name) == read_text(dir / "bf16" / name));
    }
  }
}

TEST_CASE("a stack: each tensor its own per-tensor scale, the files with a leading dimension") {
  Scratch dir("quantize-stack");
  const std::int64_t rows = 32, cols = 64, n = rows * cols;
  // Three tensors of different amax: the ramp times 1, 1/8 and 40.
  std::vector<float> stack;
  const float factors[3] = {1.0f, 0.125f, 40.0f};
  for (int t = 0; t < 3; ++t) {
    std::vector<float> x = ramp(rows, cols);
    for (float& v : x) v *= factors[t];
    write_input(dir / ("t" + std::to_string(t) + ".npy"), rows, cols, x);
    stack.insert(stack.end(), x.begin(), x.end());
  }
  write_text(dir / "stack.npy",
             experiments::cli::npy_file("<f4", {3, rows, cols}, stack.data(), stack.size() * 4));
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--format", "nvfp4", "--mode", "torchao"},
           {"--format", "nvfp4", "--mode", "torchao-1level", "--axis", "columns"},
           {"--format", "e5m2", "--mode", "te"}}) {
    INFO(flags[3]);
    // A directory per flag set: a run writes no global.npy but leaves one already there.
    const std::string stack_dir = "stack-" + flags[3], files_dir = "files-" + flags[3];
    const bool global = flags[3] != "torchao-1level" && flags[1] == "nvfp4";
    REQUIRE(run_to_end(quantize(dir / "stack.npy", dir / stack_dir, flags), dir / "stack.log") ==
            0);
    // Several files stack as the 3-D file does, and fp8lab-quantize writes the same bytes.
    REQUIRE(run_to_end(plus(plus({kFp8labQuantize}, flags),
                            {"--in", (dir / "t0.npy").string(), "--in", (dir / "t1.npy").string(),
                             (dir / "t2.npy").string(), "--out", (dir / files_dir).string()}),
                       dir / "files.log") == 0);
    INFO(read_text(dir / "files.log"));
    for (const char* name : {"codes.npy", "scales.npy", "global.npy"}) {
      if (!global && std::string(name) == "global.npy") continue;
      CHECK(read_text(dir / stack_dir / name) == read_text(dir / files_dir / name));
    }
    CHECK(std::filesystem::exists(dir / stack_dir / "global.npy") == global);
    const Npy codes = read_npy(dir / stack_dir / "codes.npy");
    const Npy scales = read_npy(dir / stack_dir / "scales.npy");
    CHECK_THAT(codes.header, Catch::Contains("'shape': (3, "));
    CHECK_THAT(scales.header, Catch::Contains("'shape': (3, "));
    std::string globals;
    if (global) {
      const Npy g = read_npy(dir / stack_dir / "global.npy");
      CHECK_THAT(g.header, Catch::Contains("'shape': (3, 3)"));
      globals = g.data;
    }
    // Tensor t of the stack is what a call on that tensor alone writes.
    for (int t = 0; t < 3; ++t) {
      const auto one = dir / ("one-" + flags[3] + std::to_string(t));
      REQUIRE(run_to_end(quantize(dir / ("t" + std::to_string(t) + ".npy"), one, flags),
                         one.string() + ".log") == 0);
      const std::string c = read_npy(one / "codes.npy").data, s = read_npy(one / "scales.npy").data;
      CHECK(codes.data.substr(t * c.size(), c.size()) == c);
      CHECK(scales.data.substr(t * s.size(), s.size()) == s);
      if (global) CHECK(globals.substr(t * 12, 12) == read_npy(one / "global.npy").data);
    }
    CHECK(codes.data.size() == 3 * static_cast<std::size_t>(n) / (flags[1] == "nvfp4" ? 2 : 1));
  }
}

TEST_CASE("torchao-1level: block scales amax_b / 6 clamped to [2^-6, 448], no global.npy") {
  Scratch dir("quantize-1level");
  // Block 0: amax 6 -> scale 1.0 (0x38), the values' own codes. Block 1: amax 0.03 -> 0.005 ->
  // clamped to 2^-6 (0x08); 0.03 * 64 = 1.92 -> 2.0 (0x4). Two-level would give block 0 the scale
  // 448 (its amax is the tensor's).
  std::vector<float> x(32, 0.0f);
  const float head[] = {6, 3, 1.5f, -0.5f, -6, 0, 1, 2};
  std::memcpy(x.data(), head, sizeof head);
  x[16] = 0.03f;
  write_input(dir / "x.npy", 1, 32, x);
  REQUIRE(run_to_end(quantize(dir / "x.npy", dir / "out",
                              {"--format", "nvfp4", "--mode", "torchao-1level"}),
                     dir / "log") == 0);
  CHECK(read_npy(dir / "out/scales.npy").data == std::string("\x38\x08", 2));
  std::string expected = "\x57\x93\x0f\x42";
  expected.append(4, '\0');
  expected += '\x04';
  expected.append(7, '\0');
  const std::string codes = read_npy(dir / "out/codes.npy").data;
  INFO("codes: " << hex(codes));
  CHECK(codes == expected);
  CHECK_FALSE(std::filesystem::exists(dir / "out/global.npy"));
}

TEST_CASE("a failed write exits 3 and leaves no file") {
  Scratch dir("quantize-fault");
  write_input(dir / "x.npy", 32, 64, ramp(32, 64));
  ScopedEnvironment fault(
      {{"FP8LAB_FAULT_WRITE", "2:ENOSPC"}, {"FP8LAB_FAULT_COUNT_FILE", std::nullopt}});
  CHECK(run_to_end(quantize(dir / "x.npy", dir / "out", {"--format", "nvfp4", "--mode", "te"}),
                   dir / "log") == 3);
  const std::string log = read_text(dir / "log");
  INFO(log);
  CHECK_THAT(log, Catch::Contains("ENOSPC") || Catch::Contains("No space"));
  CHECK(std::filesystem::exists(dir / "out/codes.npy"));  // the first write went through
  CHECK_FALSE(std::filesystem::exists(dir / "out/scales.npy"));
  for (const auto& entry : std::filesystem::directory_iterator(dir / "out")) {
    CHECK(entry.path().filename().string().rfind('.', 0) != 0);  // no temp file left
  }
}

}  // namespace
}  // namespace fp8lab::testing
