// A run's probe sidecar: DIR/probes/<run_id>.parquet, one Parquet file in long format (a row per
// probe step, recipe, variant, draw and parameter tensor), which pandas reads directly. The run
// record names it by its path relative to DIR ("probe_sidecar"); columns and units in
// docs/results-schema.md, "Probe sidecar".
//
// A probe measures one recipe where seed chaos is not: at the same weights and on the same batch
// as a reference step, the gradient a quantized step takes against the gradient the exact step
// takes (issue 41). Two directions share the columns:
// - kOnBaseline: in a baseline run, each probed recipe's forward and backward at the baseline's
//   weights and batch (teacher-forced); g is the baseline's fp32 gradient, g_q the recipe's.
// - kExactOnRun: in a trained FP8 run, the exact (baseline-precision) forward and backward at the
//   run's own weights and batch; g is that exact gradient, g_q the run's own.
//
// Arrow and Parquet stay behind this header, as for layer_stats_sidecar.hpp. No LibTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace fp8lab::experiments {

inline constexpr const char* kOnBaseline = "on_baseline";
inline constexpr const char* kExactOnRun = "exact_on_run";
// The variant column: the recipe as given, or with only one GEMM quantized (the other two in the
// baseline's precision), the per-GEMM attribution.
inline constexpr const char* kAllGemms = "all";
inline constexpr const char* kFpropOnly = "fprop_only";
inline constexpr const char* kDgradOnly = "dgrad_only";
inline constexpr const char* kWgradOnly = "wgrad_only";
// The tensor column of the whole-model row (every trained parameter, flattened in sorted name
// order, as ModelSnapshot); other rows name one parameter tensor.
inline constexpr const char* kWholeModel = "model";
// The draw column of a stochastic recipe's row for the mean gradient over its draws; draws
// themselves are 0..K-1 (a deterministic recipe has the one draw 0).
inline constexpr std::int64_t kMeanOfDraws = -1;

struct ProbeRow {
  std::int64_t step = 0;  // the reference step (before its optimizer step)
  std::string direction;  // kOnBaseline | kExactOnRun
  std::string recipe;     // the probed recipe's label (kOnBaseline) or the run's (kExactOnRun)
  std::string variant;    // kAllGemms | kFpropOnly | kDgradOnly | kWgradOnly
  std::int64_t draw = 0;  // 0..K-1, or kMeanOfDraws
  std::string tensor;     // a parameter name, or kWholeModel
  double loss = 0.0;      // the quantized forward's loss on the batch (whole-model rows)
  double reference_loss = 0.0;  // the exact forward's loss on the same weights and batch
  double grad_norm = 0.0;       // ||g||, the exact gradient (before clipping)
  double error_norm = 0.0;      // ||g_q - g||
  double cosine = 0.0;          // cos(g_q, g)
  double rel_error = 0.0;       // ||g_q - g|| / ||g||
  // e = g_q - g split along g: bias = (e . g) / ||g||^2 (signed, the relative length of e's
  // component along g), noise = ||e - (e . g / ||g||^2) g|| / ||g|| (the rest, relative).
  double bias = 0.0;
  double noise = 0.0;
  double chmiel_ratio = 0.0;  // ||g|| / ||g_q - g|| (docs/results-schema.md says whose definition)
  // The AdamW update each gradient gives from the reference's optimizer state (its moments and step
  // count, the step's learning rate, clipping each gradient by its own norm as training would).
  double update_cosine = 0.0;
  double update_rel_error = 0.0;
  // kMeanOfDraws rows only (NaN elsewhere): the draws' spread around their mean,
  // sqrt(mean_k ||g_k - mean g||^2) / ||g||.
  double draw_spread = 0.0;
  // The RHT's effect on the wgrad GEMM's operands (experiments/linear/rht_operands.hpp), on the rows
  // of an NVFP4 recipe's variant kAllGemms, draw 0: a Linear's weight row measures that Linear's
  // input (x) and gradient (dy) operands, the kWholeModel row all of them pooled (crest factors
  // averaged over every chunk, errors over every element); NaN on every other row. Per operand:
  // the mean crest factor amax / rms of its 16-element chunks along the tokens without and with
  // the transform, and its round-to-nearest NVFP4 relative error ||x^ - x|| / ||x|| without and
  // with it. Absent in older sidecars (read as NaN).
  double wgrad_input_crest = std::numeric_limits<double>::quiet_NaN();
  double wgrad_input_crest_rht = std::numeric_limits<double>::quiet_NaN();
  double wgrad_input_rel_error = std::numeric_limits<double>::quiet_NaN();
  double wgrad_input_rel_error_rht = std::numeric_limits<double>::quiet_NaN();
  double wgrad_grad_crest = std::numeric_limits<double>::quiet_NaN();
  double wgrad_grad_crest_rht = std::numeric_limits<double>::quiet_NaN();
  double wgrad_grad_rel_error = std::numeric_limits<double>::quiet_NaN();
  double wgrad_grad_rel_error_rht = std::numeric_limits<double>::quiet_NaN();
};

// A row that says which probe it is (its step, direction, recipe, variant, draw and tensor); every
// figure 0 until the caller sets it.
inline ProbeRow probe_row(std::int64_t step, std::string direction, std::string recipe,
                          std::string variant, std::int64_t draw = 0, std::string tensor = "") {
  ProbeRow row;
  row.step = step;
  row.direction = std::move(direction);
  row.recipe = std::move(recipe);
  row.variant = std::move(variant);
  row.draw = draw;
  row.tensor = std::move(tensor);
  return row;
}

// Relative to a results directory: where a run's probe sidecar lives.
std::filesystem::path probe_relative_path(const std::string& run_id);

// `rows` as the bytes of one Parquet file; `path` names it in errors (std::runtime_error).
std::string probe_parquet(const std::vector<ProbeRow>& rows, const std::filesystem::path& path);
// Writes probe_parquet(rows) at `path` atomically (temp file, fsync, rename).
void write_probes(const std::filesystem::path& path, const std::vector<ProbeRow>& rows);
// Reads a sidecar back. Throws std::runtime_error naming the file and the column when it is not a
// Parquet file or a column is missing (but the wgrad_* columns, absent before them: NaN) or of
// another type; NotARegularFile (no_follow.hpp) when it
// is a FIFO, a device, a directory or a link.
std::vector<ProbeRow> read_probes(const std::filesystem::path& path);

}  // namespace fp8lab::experiments
