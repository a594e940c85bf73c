// fp8lab quantize --format F --mode M [--rounding R] [--axis rows|columns] [--2d] [--rht]
//                 --in X.npy [Y.npy ...] --out DIR
// (also the program fp8lab-quantize, the same flags without the word quantize: it links sim,
// recipes and this file but not LibTorch, so it starts in milliseconds; experiments/CMakeLists.txt)
// Quantizes fp32 or bf16 tensors as a peer does and writes what the peer stores
// (sim/scaling/stored.hpp) as DIR/codes.npy (uint8), DIR/scales.npy (raw scale bytes, one per
// block, row-major, no swizzle; float32 for the per-tensor FP8 formats) and, for two-level NVFP4,
// DIR/global.npy (float32 amax, encode scale, decode scale): how a user checks a dump from a real
// GPU run against the reference. One 1-D or 2-D file is one tensor and the files have its shapes;
// a 3-D file (T, rows, cols), or several files of one (rows, cols), is a stack: each tensor is
// quantized on its own (its own per-tensor amax and scale) and each file gains a leading dimension,
// the tensors in the order given (global.npy: (T, 3)).
//
// The flags name a recipe (recipe_text below), which recipes/ reads and validates and its lowering
// turns into the QuantizePlan, for the forward GEMM's input (rows), the wgrad GEMM's input
// (columns: 1 x n blocks of x^T), or with --2d the weight (16 x 16 tiles): there is no second
// dispatch from formats to quantizers here. Bad input: a message naming the flag or the file and
// what is accepted, exit 2; a failed write (a full disk): exit 3.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "experiments/cli/command_exit.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/cli/npy.hpp"
#include "experiments/cli/option_checks.hpp"
#include "experiments/results/results_files.hpp"
#include "recipes/lowering.hpp"
#include "recipes/recipe_file.hpp"
#include "sim/rht.hpp"
#include "sim/scaling/execute.hpp"
#include "sim/scaling/nvfp4.hpp"
#include "sim/scaling/stored.hpp"

namespace fp8lab::experiments::cli {
namespace {

namespace sc = sim::scaling;

struct QuantizeOptions {
  std::string command;  // "fp8lab quantize" or "fp8lab-quantize", for its messages
  std::string format, mode, rounding, axis = "rows", out;
  std::vector<std::string> in;
  bool two_d = false, rht = false;
};

// --format: the recipe's scaling and, for the FP8 ones, its fp8_format.
struct FormatRow {
  const char* scaling_te;       // --mode te
  const char* scaling_torchao;  // --mode torchao*
  const char* fp8_format;       // nullptr: the scaling's own element format
};
const std::map<std::string, FormatRow>& formats() {
  static const std::map<std::string, FormatRow> table = {
      {"nvfp4", {"nvfp4", "nvfp4", nullptr}},
      {"mxfp4", {"mxfp4", "mxfp4", nullptr}},
      {"mxfp6_e2m3", {"mxfp6_e2m3", "mxfp6_e2m3", nullptr}},
      {"mxfp6_e3m2", {"mxfp6_e3m2", "mxfp6_e3m2", nullptr}},
      {"mxfp8_e4m3", {"mxfp8", "mxfp8", "E4M3"}},
      {"mxfp8_e5m2", {"mxfp8", "mxfp8", "E5M2"}},
      {"e4m3", {"current", "tensorwise", "E4M3"}},  // TE Float8CurrentScaling, torchao tensorwise
      {"e5m2", {"current", "tensorwise", "E5M2"}},
  };
  return table;
}
constexpr const char* kFormats =
    "nvfp4, mxfp4, mxfp6_e2m3, mxfp6_e3m2, mxfp8_e4m3, mxfp8_e5m2, e4m3, e5m2";
constexpr const char* kModes =
    "te, torchao (= torchao-0.18), torchao-0.18, torchao-main (MX only), torchao-1level (NVFP4 "
    "only: torchao's single-level scaling, no per-tensor scale)";
constexpr const char* kRoundings = "floor (torchao's default), ceil, even, rceil";

[[noreturn]] void refuse(const std::string& problem) {
  throw CLI::ValidationError(problem);  // main exits 2 with the message
}

bool is_mx(const std::string& format) { return format.rfind("mx", 0) == 0; }

// The recipe file text the flags stand for; refuses combinations that are not a recipe's fields.
std::string recipe_text(const QuantizeOptions& o) {
  const auto row = formats().find(o.format);
  if (row == formats().end()) {
    refuse("--format '" + o.format + "' is not a format; accepted: " + kFormats);
  }
  const bool te = o.mode == "te";
  if (!te && o.mode != "torchao" && o.mode != "torchao-0.18" && o.mode != "torchao-main" &&
      o.mode != "torchao-1level") {
    refuse("--mode '" + o.mode + "' is not a mode; accepted: " + kModes);
  }
  if (o.mode == "torchao-1level" && o.format != "nvfp4") {
    refuse("--mode torchao-1level: single-level scaling is torchao's NVFP4 without a per-tensor "
           "scale: --format nvfp4 only");
  }
  if (o.mode == "torchao-main" && !is_mx(o.format)) {
    refuse("--mode torchao-main: only the MX formats have a second torchao version; --format " +
           o.format + " takes te, torchao, torchao-0.18");
  }
  if (!o.rounding.empty() && (te || !is_mx(o.format))) {
    refuse("--rounding " + o.rounding +
           ": only the MX formats with a torchao mode choose an E8M0 "
           "rounding (--mode te is TE's one rule)");
  }
  if (o.two_d && (o.format != "nvfp4" || !te)) {
    refuse("--2d: 16 x 16 tiles are TE's NVFP4 weight blocks: --format nvfp4 --mode te only");
  }
  if (o.rht && (o.format != "nvfp4" || !te || o.two_d)) {
    refuse("--rht: TE's random Hadamard transform belongs to its NVFP4 recipe, on 1-D blocks: "
           "--format nvfp4 --mode te without --2d only");
  }
  std::string text =
      "scaling: " + std::string(te ? row->second.scaling_te : row->second.scaling_torchao) + "\n";
  if (row->second.fp8_format != nullptr)
    text += "fp8_format: " + std::string(row->second.fp8_format) + "\n";
  if (o.format == "nvfp4") {
    text += std::string("nvfp4_mode: ") + (te ? "te" : "torchao") + "\n";
    if (o.two_d) text += "nvfp4_2d: true\n";
  } else if (is_mx(o.format)) {
    const std::string rounding = o.rounding.empty() ? "floor" : o.rounding;
    if (te) {
      text += "mx_scale_mode: te\n";
    } else if (rounding != "floor" && rounding != "ceil" && rounding != "even" &&
               rounding != "rceil") {
      refuse("--rounding '" + o.rounding + "' is not an E8M0 rounding; accepted: " + kRoundings);
    } else {
      text += "mx_scale_mode: " + rounding +
              "\ntorchao_version: " + (o.mode == "torchao-main" ? "torchao-main" : "torchao-0.18") +
              "\n";
    }
  }
  return text;
}

std::string flags_text(const QuantizeOptions& o) {
  std::string s = "--format " + o.format + " --mode " + o.mode;
  if (!o.rounding.empty()) s += " --rounding " + o.rounding;
  s += " --axis " + o.axis;
  if (o.two_d) s += " --2d";
  if (o.rht) s += " --rht";
  return s;
}

// The tensors of the --in files, one after the other, and which file each came from.
struct Inputs {
  Float32Stack stack;               // count = the tensors of every file
  std::vector<std::string> source;  // per tensor: "'file'" or "'file' tensor i"
  bool stacked = false;  // several files or a 3-D one: the outputs gain a leading dimension
};

Inputs read_inputs(const std::vector<std::string>& files) {
  Inputs in;
  for (const std::string& file : files) {
    Float32Stack s = read_npy_stack(file);
    const bool three_d = s.dimensions == 3;
    if (in.source.empty()) {
      in.stack.rows = s.rows, in.stack.cols = s.cols, in.stack.count = 0;
    } else if (s.rows != in.stack.rows || s.cols != in.stack.cols) {
      refuse("--in '" + file + "': tensors of " + std::to_string(s.rows) + " x " +
             std::to_string(s.cols) + "; accepted: those of the first file, '" + files.front() +
             "' (" + std::to_string(in.stack.rows) + " x " + std::to_string(in.stack.cols) +
             "): the tensors of one call share their shape (a ragged stack takes one call per "
             "shape)");
    }
    for (std::int64_t t = 0; t < s.count; ++t) {
      in.source.push_back("'" + file + "'" + (three_d ? " tensor " + std::to_string(t) : ""));
    }
    in.stacked = in.stacked || three_d;
    in.stack.count += s.count;
    in.stack.values.insert(in.stack.values.end(), s.values.begin(), s.values.end());
  }
  in.stacked = in.stacked || files.size() > 1;
  return in;
}

int quantize_all(const QuantizeOptions& o) {
  const std::string text = recipe_text(o);
  const recipes::Recipe recipe = recipes::parse_recipe_text(text, o.command + " " + flags_text(o));
  const bool columns = o.axis == "columns";
  const bool single_level = o.mode == "torchao-1level";
  // Which operand's plan: the tensor as an activation (rows: fprop's input, K along the row;
  // columns: wgrad's input, K down the column), or as a weight for TE's 16 x 16 tiles.
  const sc::Operand operand = o.two_d ? sc::Operand::kWeight : sc::Operand::kInput;
  const sc::Gemm gemm = o.two_d ? (columns ? sc::Gemm::kDgrad : sc::Gemm::kFprop)
                                : (columns ? sc::Gemm::kWgrad : sc::Gemm::kFprop);
  const sc::QuantizePlan plan = recipes::plan(recipe, operand, gemm);

  Inputs in = read_inputs(o.in);
  const std::int64_t rows = in.stack.rows, cols = in.stack.cols;
  const auto size = static_cast<std::size_t>(rows * cols);
  std::string codes, scales;
  std::vector<float> global;
  sc::StoredTensor stored;
  for (std::int64_t t = 0; t < in.stack.count; ++t) {
    const std::string& source = in.source[static_cast<std::size_t>(t)];
    const std::span<float> x(in.stack.values.data() + static_cast<std::size_t>(t) * size, size);
    std::vector<float> y;
    if (o.rht) {
      // TE transforms 16 consecutive elements along the blocks: down the columns for the
      // columnwise copy (its use: 16 tokens of one feature), along the rows otherwise.
      y.resize(size);
      try {
        sim::random_hadamard_transform_bf16(x, rows, cols,
                                            columns ? sim::RhtAxis::kRows : sim::RhtAxis::kCols,
                                            sim::kTeRhtSignMask, y);
      } catch (const std::invalid_argument& e) {
        refuse("--rht on --in " + source + " (" + std::to_string(rows) + " x " +
               std::to_string(cols) + "): " + e.what());
      }
    }
    const std::span<const float> q = o.rht ? std::span<const float>(y) : x;
    // The single-level mode is the lowering's torchao plan (its block) with the per-tensor scale
    // left out: sim's quantize_nvfp4_single_level, not a recipe mode.
    const sc::QuantizeResult result =
        single_level ? sc::quantize_nvfp4_single_level(q, rows, cols, plan.block)
                     : sc::quantize(plan, q, rows, cols);
    try {
      stored = sc::stored_bytes(plan, result.tensor);
    } catch (const std::invalid_argument& e) {
      refuse("--in " + source + ": " + e.what());
    }
    codes.append(reinterpret_cast<const char*>(stored.codes.data()), stored.codes.size());
    scales.append(reinterpret_cast<const char*>(stored.scales.data()), stored.scales.size());
    if (!single_level) global.insert(global.end(), stored.global.begin(), stored.global.end());
  }

  const std::int64_t count = in.stack.count;
  const auto shape = [&](std::int64_t r, std::int64_t c) {
    return in.stacked ? std::vector<std::int64_t>{count, r, c} : std::vector<std::int64_t>{r, c};
  };
  const auto directory = open_directory(o.out, /*create=*/true);
  write_file_at(
      *directory, "codes.npy",
      npy_file("|u1", shape(stored.code_rows, stored.code_cols), codes.data(), codes.size()));
  write_file_at(*directory, "scales.npy",
                npy_file(stored.fp32_scales ? "<f4" : "|u1",
                         shape(stored.scale_rows, stored.scale_cols), scales.data(),
                         scales.size()));
  if (!global.empty()) {
    const std::vector<std::int64_t> global_shape = in.stacked ? std::vector<std::int64_t>{count, 3}
                                                              : std::vector<std::int64_t>{3};
    write_file_at(*directory, "global.npy",
                  npy_file("<f4", global_shape, global.data(), global.size() * sizeof(float)));
  }
  const std::string stack = in.stacked ? std::to_string(count) + " tensors of "
                                       : std::string("one tensor of ");
  const std::string lead = in.stacked ? std::to_string(count) + " x " : "";
  std::printf(
      "%s: %s: %s%lld x %lld, %s %s%s blocks %lldx%lld; wrote %s/codes.npy (%s%lld x %lld uint8), "
      "scales.npy (%s%lld x %lld %s)%s\n",
      o.command.c_str(), flags_text(o).c_str(), stack.c_str(), static_cast<long long>(rows),
      static_cast<long long>(cols), sc::to_string(plan.kind), sim::spec(plan.format).name,
      single_level ? " single-level" : "", static_cast<long long>(plan.blocks(rows, cols).rows),
      static_cast<long long>(plan.blocks(rows, cols).cols), o.out.c_str(), lead.c_str(),
      static_cast<long long>(stored.code_rows), static_cast<long long>(stored.code_cols),
      lead.c_str(), static_cast<long long>(stored.scale_rows),
      static_cast<long long>(stored.scale_cols), stored.fp32_scales ? "float32" : "uint8",
      global.empty() ? ""
                     : (in.stacked ? ", global.npy (per tensor: amax, encode scale, decode scale)"
                                   : ", global.npy (amax, encode scale, decode scale)"));
  return 0;
}

}  // namespace

void add_quantize_options(CLI::App& command, const std::string& name) {
  auto o = std::make_shared<QuantizeOptions>();
  o->command = name;
  command.add_option("--format", o->format, std::string("element format and scaling: ") + kFormats)
      ->required();
  command.add_option("--mode", o->mode, std::string("whose arithmetic: ") + kModes)->required();
  command.add_option("--rounding", o->rounding,
                     std::string("E8M0 rounding of the torchao MX modes: ") + kRoundings);
  command
      .add_option("--axis", o->axis,
                  "rows (1 x n blocks along each row; the default) or columns (the codes and "
                  "scales of x^T: TE's columnwise copy)")
      ->check(CLI::IsMember({"rows", "columns"}));
  command.add_flag("--2d", o->two_d, "NVFP4 te: 16 x 16 tiles (TE's weights)");
  command.add_flag("--rht", o->rht,
                   "NVFP4 te: TE's 16-point random Hadamard transform (fixed sign vector, bf16 "
                   "output) along the blocks before the cast");
  command
      .add_option("--in", o->in,
                  "input: .npy files of float32 ('<f4') or bfloat16 (ml_dtypes' '<V2'), shape "
                  "(rows, cols), (cols,) or a stack (tensors, rows, cols); several files (one "
                  "shape) stack too; each tensor has its own per-tensor scale")
      ->required()
      ->check(CLI::ExistingFile);
  command.add_option("--out", o->out, "output directory (created when absent)")
      ->required()
      ->check(output_directory());
  command.callback([o] {
    finish_command(
        o->command, [o] { return quantize_all(*o); },
        [o](const IoError& e) {
          return io_error_text(o->command, e,
                               "a file it names is not written; those before it are whole");
        });
  });
}

void add_quantize_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "quantize", "Quantize fp32 or bf16 .npy tensors (one, or a stack) as a peer does and write "
                  "what it stores: codes.npy, scales.npy and, for two-level NVFP4, global.npy");
  add_quantize_options(*command, "fp8lab quantize");
}

}  // namespace fp8lab::experiments::cli
