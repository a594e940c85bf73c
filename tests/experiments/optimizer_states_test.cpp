// Issue 43 item 3 in LibTorch: QuantizedAdamW steps each parameter as sim/optim's adamw_step does
// (bits of the weights and the stored moments after k steps, every option), shows the decoded
// moments as its AdamW state, and end to end on the MLP: optimizer_states absent and given as
// fp32 make the same record (today's AdamW); a quantized run records its states' figures.
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "experiments/results/layer_stats_sidecar.hpp"
#include "experiments/run/quantized_adamw.hpp"
#include "experiments/run/run_executor.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/run_request.hpp"

namespace fp8lab::experiments {
namespace {

using sim::optim::Expansion;
using sim::optim::MasterWeights;
using sim::optim::OptimizerPrecision;
using sim::optim::StateFormat;
using sim::optim::StateScaling;

std::vector<float> floats(const torch::Tensor& t) {
  const auto c = t.detach().to(torch::kFloat).contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}
std::vector<std::uint32_t> bits(const std::vector<float>& x) {
  std::vector<std::uint32_t> out(x.size());
  if (!x.empty()) std::memcpy(out.data(), x.data(), x.size() * sizeof(float));
  return out;
}

OptimizerPrecision precision_of(StateFormat m, StateFormat v, StateScaling scaling,
                                Expansion expansion, MasterWeights master) {
  OptimizerPrecision p;
  p.m = {m, scaling, 128, expansion, 16};
  p.v = {v, scaling, 128, expansion, 16};
  p.master = master;
  return p;
}

using testing::request_for;

// A record without what differs between two runs of the same request (times, the host's load).
nlohmann::json without_times(nlohmann::json record) {
  for (const char* key : {"started_at", "finished_at", "throughput", "host"}) record.erase(key);
  return record;
}

}  // namespace

TEST_CASE("QuantizedAdamW's step is sim's adamw_step, bit for bit", "[optimizer]") {
  const OptimizerPrecision options[] = {
      precision_of(StateFormat::kBf16, StateFormat::kBf16, StateScaling::kPerTensor,
                   Expansion::kNone, MasterWeights::kFp32),
      precision_of(StateFormat::kE4M3, StateFormat::kFp16, StateScaling::kPerTensor,
                   Expansion::kNone, MasterWeights::kBf16),
      precision_of(StateFormat::kE4M3, StateFormat::kE4M3, StateScaling::kPerBlock,
                   Expansion::kCoat, MasterWeights::kBf16Stochastic),
      precision_of(StateFormat::kE5M2, StateFormat::kE5M2, StateScaling::kPerBlock,
                   Expansion::kNone, MasterWeights::kFp32),
  };
  for (const auto& precision : options) {
    torch::manual_seed(3);
    std::vector<torch::Tensor> params{torch::randn({7, 40}) * 0.02, torch::randn({300}) * 0.1};
    for (auto& p : params) p.set_requires_grad(true);
    const auto adamw_options =
        torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).weight_decay(0.1);
    QuantizedAdamW optimizer(params, adamw_options, precision, 11);
    // sim's hyperparameters, the same (eps: both defaults, 1e-8).
    sim::optim::AdamWHyper hyper{.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .weight_decay = 0.1f};
    // sim's copy: the weights as the optimizer made them (bf16 master weights start rounded).
    std::vector<std::vector<float>> weights;
    std::vector<sim::optim::MomentStates> moments;
    for (const auto& p : params) {
      weights.push_back(floats(p));
      moments.push_back(
          sim::optim::initial_moments(static_cast<std::size_t>(p.numel()), precision));
    }
    for (std::int64_t step = 1; step <= 4; ++step) {
      optimizer.zero_grad();
      for (auto& p : params) p.mutable_grad() = torch::randn(p.sizes()) * 1e-3;
      for (std::size_t i = 0; i < params.size(); ++i) {
        hyper.step = step;
        sim::optim::adamw_step(
            hyper, precision, weights[i], floats(params[i].grad()), moments[i], 11,
            (static_cast<std::uint64_t>(i) << 32) | static_cast<std::uint64_t>(step));
      }
      optimizer.step();
      for (std::size_t i = 0; i < params.size(); ++i) {
        INFO("option m " << static_cast<int>(precision.m.format) << " step " << step << " param "
                         << i);
        REQUIRE(bits(floats(params[i])) == bits(weights[i]));
        REQUIRE(optimizer.moments(i) == moments[i]);
        // The AdamW state holds the stored moments decoded.
        const auto& state = static_cast<const torch::optim::AdamWParamState&>(
            *optimizer.state().at(params[i].unsafeGetTensorImpl()));
        std::vector<float> decoded(weights[i].size());
        sim::optim::decode_state(moments[i].m, precision.m, decoded);
        CHECK(bits(floats(state.exp_avg())) == bits(decoded));
        CHECK(state.step() == step);
      }
    }
  }
}

TEST_CASE("optimizer_states absent or fp32: the same record; quantized: its figures recorded",
          "[optimizer]") {
  use_one_torch_thread();
  const testing::Scratch dir_a("optstates-absent"), dir_b("optstates-fp32"), dir_c("optstates-fp8");
  // The records as written (execute_fp8_run returns the typed RunRecord).
  const auto absent = to_json(
      execute_fp8_run(ResultsDirectory(dir_a.path()), request_for("scaling: current\n", 4)));
  const auto fp32 = to_json(execute_fp8_run(
      ResultsDirectory(dir_b.path()),
      request_for("scaling: current\noptimizer_states: {m: fp32, v: fp32}\nmaster_weights: fp32\n",
                  4)));
  REQUIRE(absent["status"] == "finished");
  CHECK(absent["run_id"] == fp32["run_id"]);
  CHECK_FALSE(absent.contains("optimizer_states"));
  CHECK(without_times(absent) == without_times(fp32));

  const auto fp8lm = to_json(execute_fp8_run(
      ResultsDirectory(dir_c.path()),
      request_for("scaling: current\noptimizer_states: {m: fp8_e4m3, v: fp16}\n", 4)));
  REQUIRE(fp8lm["status"] == "finished");
  CHECK(fp8lm["run_id"] != absent["run_id"]);
  const auto& part = fp8lm["optimizer_states"];
  CHECK(part["m"] == "fp8_e4m3");
  CHECK(part["v"] == "fp16");
  CHECK(part["scaling"] == "per_tensor");
  CHECK(part["master_weights"] == "fp32");
  REQUIRE(part["rows"].size() >= 2);
  const auto& last = part["rows"].back();
  CHECK(last["step"] == 3);
  // E4M3's 3 mantissa bits store m at roughly 30 dB, fp16 v far better; fp32 weights are exact.
  CHECK(last["m_sqnr_db"].get<double>() > 20.0);
  CHECK(last["m_sqnr_db"].get<double>() < 40.0);
  CHECK(last["v_sqnr_db"].get<double>() > last["m_sqnr_db"].get<double>());
  CHECK(last["update_rel_error"].is_null());
  // The typed record reads the part.
  const auto typed = run_record_from_json(fp8lm);
  REQUIRE(typed.optimizer_states.has_value());
  CHECK(*typed.optimizer_states->m == "fp8_e4m3");
  CHECK(to_json(typed) == fp8lm);
  CHECK(fp8lm["train"].back()["loss"] != absent["train"].back()["loss"]);

  // The sidecar: a row per parameter, moment and logged step, pooling to the record's figure.
  REQUIRE(fp8lm["layer_stats_sidecar"].is_string());
  const auto rows =
      read_layer_stats(dir_c.path() / fp8lm["layer_stats_sidecar"].get<std::string>());
  std::map<std::int64_t, std::pair<double, double>> pooled_m;  // step -> (signal, noise)
  std::set<std::string> layers;
  std::size_t optimizer_rows = 0;
  for (const auto& r : rows) {
    if (r.recipe != kOptimizerStatesRecipe) continue;
    ++optimizer_rows;
    INFO(r.layer << " " << r.tensor << " step " << r.step);
    CHECK(r.gemm == "optimizer");
    CHECK(r.copy == "stored");
    CHECK(r.count > 0);
    CHECK((r.tensor == "exp_avg" || r.tensor == "exp_avg_sq"));
    layers.insert(r.layer);
    if (r.tensor != "exp_avg") continue;
    REQUIRE(std::isfinite(r.sqnr_db));
    const double noise = r.mse * static_cast<double>(r.count);
    pooled_m[r.step].first += noise * std::pow(10.0, r.sqnr_db / 10.0);
    pooled_m[r.step].second += noise;
  }
  // Every parameter, named as the model names it, with both moments at every logged step.
  REQUIRE(!layers.empty());
  for (const auto& name : layers) {
    INFO(name);
    CHECK((name.ends_with(".weight") || name.ends_with(".bias")));
  }
  CHECK(optimizer_rows == 2 * layers.size() * part["rows"].size());
  for (const auto& row : part["rows"]) {
    const auto step = row["step"].get<std::int64_t>();
    INFO("step " << step);
    REQUIRE(pooled_m.count(step) == 1);
    CHECK(10.0 * std::log10(pooled_m[step].first / pooled_m[step].second) ==
          Approx(row["m_sqnr_db"].get<double>()).epsilon(1e-9));
  }
  // A run with fp32 states has none.
  if (absent["layer_stats_sidecar"].is_string()) {
    for (const auto& r :
         read_layer_stats(dir_a.path() / absent["layer_stats_sidecar"].get<std::string>())) {
      CHECK(r.recipe != kOptimizerStatesRecipe);
    }
  }
}

}  // namespace fp8lab::experiments
