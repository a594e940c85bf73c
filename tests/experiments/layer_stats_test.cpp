// The per-layer statistics of the sidecar (experiments/linear/linear_stats.hpp, what_if.hpp,
// experiments/results/layer_stats_sidecar.hpp):
// - each statistic equals a direct computation on the same tensors, for every blocked layout;
// - a planted fault (a block of outlier weights in one layer, or one layer's input scaled by 1e4)
//   is flagged by that layer's rows, and the what-if rows of the same tensors say which recipe
//   would not underflow there;
// - a sidecar reads back as written, and a bad file is refused naming it.
#include "linear_test_support.hpp"  // first: LibTorch, then Catch2

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <vector>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/fp8_linear.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "experiments/linear/what_if.hpp"
#include "experiments/render/layer_stats_report.hpp"
#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/run/layer_stats_rows.hpp"
#include "recipes/error.hpp"
#include "sim/format.hpp"
#include "sim/scaling/stats.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

namespace fp8lab::experiments {
namespace {
using testing::typed;

// The statistics computed straight from x, the codes and the scales, each by its definition
// (docs/results-schema.md), without OperandStats or sim::scaling's sums.
struct Direct {
  double underflow_pct, overflow_pct, sqnr_db, mse, amax, scale_inv_min, scale_inv_max,
      dynamic_range, kurtosis;
};

Direct direct_statistics(const std::vector<float>& x, const sim::QuantizedTensor& q) {
  const std::vector<float> xhat = sim::scaling::dequantize(q);  // decode(q) * scale_inv
  const auto n = static_cast<double>(x.size());
  // A y = x * s past max_finite overflows once it rounds above it: E4M3 rounds y < 464 (448 + half
  // of its ulp 32; 464 is a tie to the even 448) down to 448, E5M2 y < 61440 (57344 + 4096; the
  // tie goes to the even 2^16, Inf) to 57344.
  const bool e4m3 = q.format == sim::Format::E4M3;
  const double overflow_at = e4m3 ? 464.0 : 61440.0;
  double underflowed = 0, saturated = 0, signal = 0, noise = 0, counted = 0, amax = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    const auto r = static_cast<std::int64_t>(i) / q.cols, c = static_cast<std::int64_t>(i) % q.cols;
    const std::size_t block =
        static_cast<std::size_t>((r / q.block_rows) * q.scale_cols() + c / q.block_cols);
    if (!std::isnan(v)) amax = std::max(amax, static_cast<double>(std::fabs(v)));
    if (v != 0.0f && !std::isnan(v) && (q.data[i] & 0x7F) == 0) ++underflowed;
    const double y = std::fabs(static_cast<double>(v) * q.scale[block]);
    if (!std::isnan(v) && (y > overflow_at || (!e4m3 && y == overflow_at))) ++saturated;
    if (!std::isfinite(v) || !std::isfinite(xhat[i])) continue;
    signal += static_cast<double>(v) * v;
    noise += (static_cast<double>(v) - xhat[i]) * (static_cast<double>(v) - xhat[i]);
    ++counted;
  }
  // Kurtosis in two passes: mean first, then the central moments.
  double sum = 0, finite = 0;
  for (const float v : x) {
    if (!std::isfinite(v)) continue;
    sum += v;
    ++finite;
  }
  const double mean = sum / finite;
  double m2 = 0, m4 = 0;
  for (const float v : x) {
    if (!std::isfinite(v)) continue;
    const double d = v - mean;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  m2 /= finite;
  m4 /= finite;
  // Blockwise dynamic range: per block, largest over smallest finite nonzero magnitude.
  double widest = 0;
  for (std::int64_t br = 0; br < q.scale_rows(); ++br) {
    for (std::int64_t bc = 0; bc < q.scale_cols(); ++bc) {
      double lo = INFINITY, hi = 0;
      for (std::int64_t r = br * q.block_rows; r < std::min(q.rows, (br + 1) * q.block_rows); ++r) {
        for (std::int64_t c = bc * q.block_cols; c < std::min(q.cols, (bc + 1) * q.block_cols);
             ++c) {
          const double m = std::fabs(x[static_cast<std::size_t>(r * q.cols + c)]);
          if (!std::isfinite(m) || m == 0) continue;
          lo = std::min(lo, m);
          hi = std::max(hi, m);
        }
      }
      if (hi > 0) widest = std::max(widest, std::log2(hi) - std::log2(lo));
    }
  }
  return {100 * underflowed / n,
          100 * saturated / n,
          10 * std::log10(signal / noise),
          noise / counted,
          amax,
          *std::min_element(q.scale_inv.begin(), q.scale_inv.end()),
          *std::max_element(q.scale_inv.begin(), q.scale_inv.end()),
          widest,
          m4 / (m2 * m2)};
}

}  // namespace

TEST_CASE("each layer statistic equals its direct computation on the same tensors",
          "[linear][stats][layer_stats]") {
  const auto scaling = GENERATE(recipes::Scaling::delayed, recipes::Scaling::current,
                                recipes::Scaling::rowwise, recipes::Scaling::block,
                                recipes::Scaling::mxfp8);
  const auto tensor = GENERATE(Operand::kInput, Operand::kWeight, Operand::kGradOutput);
  const auto role = GENERATE(Gemm::kFprop, Gemm::kDgrad, Gemm::kWgrad);
  if (!sim::scaling::uses_operand(role, tensor)) return;
  INFO(recipes::name(scaling) << " " << name(tensor) << " for " << name(role));
  SimBackend backend;
  auto state = backend.make_state(test::fp32_seq_recipe(scaling));
  constexpr std::int64_t rows = 150, cols = 70;  // partial blocks of 32 and 128
  torch::Tensor t = test::normal({rows, cols}, 7, 3.0);
  t.index_put_({2, 3}, 1e-30f);  // underflows under every scaling
  t.index_put_({4, 4}, 0.0f);
  t.index_put_({140, 60}, 2e3f);  // saturates at delayed's initial scale 1
  std::vector<float> x(t.const_data_ptr<float>(), t.const_data_ptr<float>() + t.numel());
  const auto result = backend.quantize(*state, tensor, role, {x, rows, cols});
  const OperandStats stats = measure_quantization({x, rows, cols}, result);
  const Direct d = direct_statistics(x, result.tensor);
  const LayerStatsRow row = layer_stats_row(3, "fc", tensor, role, kTrainedRecipe, stats);

  CHECK(row.underflow_pct == d.underflow_pct);
  CHECK(row.underflow_pct > 0);
  CHECK(row.overflow_pct == d.overflow_pct);
  // 2e3 at delayed's scale 1 saturates E4M3 (input, weight), not E5M2 (HYBRID's grad_output).
  if (scaling == recipes::Scaling::delayed && result.tensor.format == sim::Format::E4M3) {
    CHECK(row.overflow_pct > 0);
  }
  CHECK(row.sqnr_db == d.sqnr_db);  // the same sums in the same element order
  CHECK(row.mse == d.mse);
  CHECK(row.amax == d.amax);
  CHECK(row.scale_inv_min == d.scale_inv_min);
  CHECK(row.scale_inv_max == d.scale_inv_max);
  CHECK(row.max_block_dynamic_range_log2 == d.dynamic_range);
  CHECK(row.max_block_dynamic_range_log2 > 90);  // 1e-30 beside values near 1: 2^-100
  // Raw power sums against the two-pass formula: equal up to float64 rounding.
  CHECK(row.kurtosis == Approx(d.kurtosis).epsilon(1e-9));
  CHECK(row.copy == sim::scaling::to_string(sim::scaling::scale_axis(role, tensor)));
  CHECK(row.count == rows * cols);
}

TEST_CASE("pooled statistics are those of the pooled elements", "[linear][stats][layer_stats]") {
  // Two quantizations merged: the kurtosis and MSE of both tensors' elements together.
  SimBackend backend;
  auto state = backend.make_state(test::fp32_seq_recipe(recipes::Scaling::current));
  const torch::Tensor a = test::normal({8, 32}, 1, 1.0), b = test::normal({8, 32}, 2, 10.0);
  const std::span<const float> va(a.const_data_ptr<float>(), 256),
      vb(b.const_data_ptr<float>(), 256);
  const auto qa = backend.quantize(*state, Operand::kInput, Gemm::kFprop, {va, 8, 32});
  const auto qb = backend.quantize(*state, Operand::kInput, Gemm::kFprop, {vb, 8, 32});
  OperandStats merged = measure_quantization({va, 8, 32}, qa);
  merged.merge(measure_quantization({vb, 8, 32}, qb));
  std::vector<float> both(va.begin(), va.end());
  both.insert(both.end(), vb.begin(), vb.end());
  // The pooled tensor [16, 32] of both, with both quantizations' codes and scales: the per-tensor
  // scale differs between halves, so the direct computation runs per half for the errors.
  const auto ea = sim::scaling::sqnr_sums(va, qa.tensor),
             eb = sim::scaling::sqnr_sums(vb, qb.tensor);
  CHECK(merged.mse() == (ea.noise + eb.noise) / 512.0);
  double mean = 0;
  for (const float v : both) mean += v;
  mean /= 512.0;
  double m2 = 0, m4 = 0;
  for (const float v : both) {
    m2 += (v - mean) * (v - mean);
    m4 += std::pow(v - mean, 4);
  }
  m2 /= 512.0;
  m4 /= 512.0;
  CHECK(merged.kurtosis() == Approx(m4 / (m2 * m2)).epsilon(1e-9));
  CHECK(merged.kurtosis() > 3.5);  // a mixture of two spreads has heavy tails
  CHECK(merged.scale_inv_min == std::min(qa.tensor.scale_inv[0], qb.tensor.scale_inv[0]));
  CHECK(merged.scale_inv_max == std::max(qa.tensor.scale_inv[0], qb.tensor.scale_inv[0]));
}

TEST_CASE("a block of outlier weights in one layer is flagged by that layer's statistics",
          "[linear][stats][layer_stats]") {
  // Three Linears under per-tensor current scaling; layer "1" gets a 4 x 4 block of weights 1e5
  // times the rest (|w| <= 0.125 by torch's init, the block up to 12500). Its per-tensor scale
  // 448 / 12500 then puts every |w| < 2^-10 / (448 / 12500) = 0.027 below E4M3's smallest
  // subnormal's half, about a fifth of them: its underflow% and dynamic range stand out, the other
  // layers' do not. The what-if rows measure the same tensors under MXFP8, whose 32-element
  // blocks confine the outliers to the 4 rows x 1 block they sit in.
  torch::manual_seed(3);
  torch::nn::Sequential model(torch::nn::Linear(64, 64), torch::nn::Linear(64, 64),
                              torch::nn::Linear(64, 32));
  {
    torch::NoGradGuard no_grad;
    model->ptr<torch::nn::LinearImpl>(1)
        ->weight.index({torch::indexing::Slice(0, 4), torch::indexing::Slice(0, 4)})
        .mul_(1e5);
  }
  recipes::Recipe recipe = test::fp32_seq_recipe(recipes::Scaling::current);
  recipe.module_filter.skip_first_last_linear = false;
  const auto converted = convert_model(*model, recipe, std::make_shared<const SimBackend>());
  REQUIRE(converted.size() == 3);
  const auto what_if = std::make_shared<const WhatIfRecipes>(lower_what_if({"mxfp8"}, "test"));
  for (const auto& module : model->modules(false)) {
    if (auto* linear = dynamic_cast<BackendLinearImpl*>(module.get())) linear->set_what_if(what_if);
  }
  const torch::Tensor x = test::normal({32, 64}, 11);
  torch::Tensor loss;
  {
    Fp8Autocast fp8(true);
    loss = model->forward(x).square().sum();
  }
  loss.backward();
  std::map<std::pair<std::string, std::string>, LayerStatsRow> weight_fprop;  // (layer, recipe)
  for (const auto& linear : collect_linear_stats(*model)) {
    const auto& trained = linear.stats.operand(Operand::kWeight, Gemm::kFprop);
    REQUIRE(linear.stats.what_if.size() == 1);
    const auto& mx = linear.stats.what_if[0][static_cast<std::size_t>(Operand::kWeight)]
                                         [static_cast<std::size_t>(Gemm::kFprop)];
    REQUIRE(trained.quantizations == 1);
    REQUIRE(mx.quantizations == 1);
    weight_fprop[{linear.name, kTrainedRecipe}] =
        layer_stats_row(0, linear.name, Operand::kWeight, Gemm::kFprop, kTrainedRecipe, trained);
    weight_fprop[{linear.name, "mxfp8"}] =
        layer_stats_row(0, linear.name, Operand::kWeight, Gemm::kFprop, "mxfp8", mx);
  }
  const auto& bad = weight_fprop.at({"1", kTrainedRecipe});
  for (const char* good : {"0", "2"}) {
    INFO("layer " << good);
    const auto& row = weight_fprop.at({good, kTrainedRecipe});
    CHECK(row.underflow_pct < 1.0);
    CHECK(bad.underflow_pct > 10 * std::max(row.underflow_pct, 0.1));
    CHECK(bad.max_block_dynamic_range_log2 > row.max_block_dynamic_range_log2 + 10);
  }
  CHECK(bad.underflow_pct > 5.0);  // above TE's AutoswitchGemm threshold
  // The same tensor under MXFP8: the outlier block shares a scale with 28 ordinary weights of its
  // rows at most, so nearly nothing underflows.
  CHECK(weight_fprop.at({"1", "mxfp8"}).underflow_pct < bad.underflow_pct / 10);
}

TEST_CASE("one layer's input scaled by 1e4 is flagged by that layer's statistics",
          "[linear][stats][layer_stats]") {
  // Delayed scaling quantizes step 0 with the initial scale 1: E4M3 holds |x| up to 448, so the
  // Linear between a x1e4 gain and a x1e-4 one ("2") saturates most of its input, the others
  // (whose inputs keep their usual size) none of theirs.
  torch::manual_seed(5);
  torch::nn::Sequential model(
      torch::nn::Linear(64, 64),
      torch::nn::Functional([](const torch::Tensor& t) { return t * 1e4; }),
      torch::nn::Linear(64, 64),
      torch::nn::Functional([](const torch::Tensor& t) { return t * 1e-4; }),
      torch::nn::Linear(64, 32));
  recipes::Recipe recipe = test::fp32_seq_recipe(recipes::Scaling::delayed);
  recipe.module_filter.skip_first_last_linear = false;
  REQUIRE(convert_model(*model, recipe, std::make_shared<const SimBackend>()).size() == 3);
  {
    Fp8Autocast fp8(true);
    model->forward(test::normal({32, 64}, 13));
  }
  std::map<std::string, LayerStatsRow> input_fprop;
  for (const auto& linear : collect_linear_stats(*model)) {
    input_fprop[linear.name] = layer_stats_row(0, linear.name, Operand::kInput, Gemm::kFprop,
                                               kTrainedRecipe,
                                               linear.stats.operand(Operand::kInput, Gemm::kFprop));
  }
  REQUIRE(input_fprop.size() == 3);
  CHECK(input_fprop.at("2").overflow_pct > 50.0);
  CHECK(input_fprop.at("2").amax > 1e3);
  for (const char* good : {"0", "4"}) {
    INFO("layer " << good);
    CHECK(input_fprop.at(good).overflow_pct == 0.0);
    CHECK(input_fprop.at("2").sqnr_db < input_fprop.at(good).sqnr_db - 20);
  }
}

TEST_CASE("what-if recipes: delayed and unknown names are refused, naming the source",
          "[linear][stats][layer_stats]") {
  CHECK_THROWS_AS(lower_what_if({"delayed"}, "--what-if"), recipes::RecipeError);
  CHECK_THROWS_WITH(lower_what_if({"mxfp9"}, "--what-if"),
                    Catch::Contains("--what-if: what_if: unknown what-if recipe 'mxfp9'") &&
                        Catch::Contains("accepted: current, tensorwise"));
  CHECK_THROWS_WITH(lower_what_if({"block", "block"}, "--what-if"),
                    Catch::Contains("is named twice"));
  // rowwise_with_gw_hp keeps wgrad in high precision: nothing to measure there.
  const auto lowered = lower_what_if({"rowwise_with_gw_hp"}, "--what-if");
  CHECK(
      lowered[0]
          .plans[static_cast<std::size_t>(Operand::kInput)][static_cast<std::size_t>(Gemm::kWgrad)]
          .kind == sim::scaling::QuantizeKind::kHighPrecision);
  CHECK(
      lowered[0]
          .plans[static_cast<std::size_t>(Operand::kInput)][static_cast<std::size_t>(Gemm::kFprop)]
          .kind == sim::scaling::QuantizeKind::kAxiswiseTorchao);
}

TEST_CASE("a layer statistics sidecar reads back as written", "[runner][layer_stats]") {
  const testing::Scratch dir("layer-stats");
  std::vector<LayerStatsRow> rows;
  for (int i = 0; i < 5; ++i) {
    LayerStatsRow row;
    row.step = i * 10;
    row.layer = "blocks." + std::to_string(i) + ".attn.qkv";
    row.tensor = "grad_output";
    row.gemm = "wgrad";
    row.copy = "columnwise";
    row.recipe = i % 2 ? "mxfp8" : kTrainedRecipe;
    row.quantizations = 2;
    row.count = 1 << 20;
    row.underflowed = i;
    row.saturated = 7;
    row.nan = 0;
    row.underflow_pct = 1e-3 * i;
    row.overflow_pct = 0.25;
    row.sqnr_db = i == 4 ? std::numeric_limits<double>::infinity() : 31.5;  // exact: +Inf
    row.mse = 1e-7;
    row.amax = 448.0;
    row.scale_inv_min = 0x1p-20;
    row.scale_inv_max = 0x1p-3;
    row.max_block_dynamic_range_log2 = 17.25;
    row.kurtosis = i == 3 ? std::numeric_limits<double>::quiet_NaN() : 3.0 + i;
    rows.push_back(row);
  }
  const auto path = dir / layer_stats_relative_path("run-1");
  CHECK(layer_stats_relative_path("run-1").generic_string() == "layer_stats/run-1.parquet");
  write_layer_stats(path, rows);
  const auto back = read_layer_stats(path);
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(back[i].step == rows[i].step);
    CHECK(back[i].layer == rows[i].layer);
    CHECK(back[i].recipe == rows[i].recipe);
    CHECK(back[i].copy == rows[i].copy);
    CHECK(back[i].underflowed == rows[i].underflowed);
    CHECK(back[i].sqnr_db == rows[i].sqnr_db);
    CHECK(back[i].scale_inv_min == rows[i].scale_inv_min);
    CHECK((std::isnan(back[i].kurtosis) ? std::isnan(rows[i].kurtosis)
                                        : back[i].kurtosis == rows[i].kurtosis));
  }
  // An empty run's sidecar is a valid file with no rows.
  write_layer_stats(dir / "empty.parquet", {});
  CHECK(read_layer_stats(dir / "empty.parquet").empty());
  // Not a Parquet file: refused, naming it.
  { std::ofstream(dir / "bad.parquet") << "{\"not\": \"parquet\"}\n"; }
  CHECK_THROWS_WITH(read_layer_stats(dir / "bad.parquet"),
                    Catch::Contains((dir / "bad.parquet").string()) &&
                        Catch::Contains("not a Parquet file"));
}

TEST_CASE("the report draws a run's layer heatmaps beside its baseline's, and the what-if table",
          "[report][layer_stats]") {
  const testing::Scratch dir("layer-report");
  // Two layers, two steps; fc2's input underflows at step 5 under the run's own quantization.
  const auto make_row = [](std::int64_t step, const std::string& layer, const std::string& recipe,
                           std::int64_t underflowed, double sqnr) {
    LayerStatsRow row;
    row.step = step;
    row.layer = layer;
    row.tensor = "input";
    row.gemm = "fprop";
    row.copy = "rowwise";
    row.recipe = recipe;
    row.quantizations = 1;
    row.count = 1000;
    row.underflowed = underflowed;
    row.underflow_pct = 100.0 * static_cast<double>(underflowed) / 1000.0;
    row.sqnr_db = sqnr;
    return row;
  };
  std::vector<LayerStatsRow> run, baseline;
  for (const std::int64_t step : {0, 5}) {
    for (const char* layer : {"fc1", "fc2"}) {
      const bool bad = step == 5 && std::string(layer) == "fc2";
      run.push_back(make_row(step, layer, kTrainedRecipe, bad ? 400 : 1, bad ? 9.0 : 30.0));
      run.push_back(make_row(step, layer, "mxfp8", 2, 33.0));
      baseline.push_back(make_row(step, layer, "current", 1, 31.0));
      baseline.push_back(make_row(step, layer, "mxfp8", 1, 34.0));
    }
  }
  // A second copy of fc2's input at step 5 (its wgrad copy): pooled with the first.
  run.push_back(make_row(5, "fc2", kTrainedRecipe, 0, 28.0));
  write_layer_stats(dir / "layer_stats/r.parquet", run);
  write_layer_stats(dir / "layer_stats/b.parquet", baseline);

  const auto table =
      layer_step_table(read_layer_stats(dir / "layer_stats/r.parquet"), kTrainedRecipe);
  CHECK(table.layers == std::vector<std::string>{"fc1", "fc2"});
  CHECK(table.steps == std::vector<std::int64_t>{0, 5});
  REQUIRE(table.figures[1][1]);
  CHECK(table.figures[1][1]->underflow_pct == 100.0 * 400 / 2000);  // pooled over both copies
  CHECK(table.figures[1][1]->worst_sqnr_db == 9.0);

  ReportInput input;
  input.records = typed(std::vector<nlohmann::json>{
      {{"kind", "baseline"}, {"run_id", "b"}, {"layer_stats_sidecar", "layer_stats/b.parquet"}},
      {{"kind", "fp8"},
       {"run_id", "r"},
       {"baseline_run_id", "b"},
       {"recipe", {{"scaling", "current"}}},
       {"recipe_label", "current E4M3"},
       {"seed", 3},
       {"layer_stats_sidecar", "layer_stats/r.parquet"}},
      {{"kind", "fp8"},
       {"run_id", "gone"},
       {"baseline_run_id", "b"},
       {"recipe", {{"scaling", "block"}}},
       {"layer_stats_sidecar", "layer_stats/gone.parquet"}}});
  for (const char* id : {"b", "r", "gone"}) {
    input.layer_stats_files[id] = dir / "layer_stats" / (std::string(id) + ".parquet");
  }
  const std::string html = render_layer_stats_html(input);
  CHECK(html.find("underflow%: this run") != std::string::npos);
  CHECK(html.find("SQNR: baseline, current what-if") != std::string::npos);
  CHECK(html.find("<td>mxfp8</td>") != std::string::npos);
  CHECK(html.find("fc2 input/fprop (step 5)") != std::string::npos);  // the worst underflow
  // report.md holds the same what-if table.
  const std::string md = render_layer_stats_markdown(input);
  // One row per run and recipe: the seed tells a recipe's seeds apart.
  CHECK(md.find("| current E4M3 | 3 | mxfp8 |") != std::string::npos);
  CHECK(md.find("| fc2 input/fprop (step 5) |") != std::string::npos);
  CHECK(md.find("- run gone: layer statistics sidecar") != std::string::npos);
  // The missing sidecar is named, not skipped silently.
  CHECK(html.find("run gone: layer statistics sidecar") != std::string::npos);
  CHECK(html.find("gone.parquet") != std::string::npos);
}

}  // namespace fp8lab::experiments
