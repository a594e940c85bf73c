// Workloads and the training loop: deterministic parameters, data and training (two runs of the
// same thing give the same bits, so that every difference a report shows comes from the recipe),
// the character corpus, the registry, and that convert_model reaches every Linear of the models.
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "experiments/linear/autocast.hpp"
#include "experiments/linear/backend_linear.hpp"
#include "experiments/linear/convert_model.hpp"
#include "experiments/linear/sim_backend.hpp"
#include "experiments/run/training.hpp"
#include "experiments/workloads/registry.hpp"
#include "experiments/workloads/text_corpus.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
         std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), a.nbytes()) == 0;
}

bool same_parameters(TrainableModel& a, TrainableModel& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  if (pa.size() != pb.size()) return false;
  for (const auto& item : pa) {
    const auto* other = pb.find(item.key());
    if (other == nullptr || !same_bits(item.value(), *other)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("The corpus reads regular files in sorted order and splits 90/10", "[workloads]") {
  namespace fs = std::filesystem;
  const testing::Scratch dir("corpus");
  std::ofstream(dir / "b") << "bbbbbbbbb";
  std::ofstream(dir / "a") << "aaaaaaaaa";
  fs::create_symlink(dir / "a", dir / "link");  // skipped: would repeat a
  const auto corpus = read_text_corpus(dir);
  REQUIRE(corpus.files.size() == 2);
  CHECK(fs::path(corpus.files[0]).filename() == "a");
  CHECK(corpus.vocabulary == std::vector<unsigned char>{'\n', 'a', 'b'});
  CHECK(corpus.vocabulary_size_padded == 16);
  CHECK(corpus.train.size() == 18);  // 20 bytes ("aaaaaaaaa\nbbbbbbbbb\n"), 90%
  CHECK(corpus.eval == std::vector<std::int64_t>{2, 0});
  CHECK(corpus.train.front() == 1);
  fs::remove_all(dir);
  CHECK_THROWS_WITH(read_text_corpus(dir), Catch::Contains(dir.string()));
}

TEST_CASE("Workloads are pure functions of seed and step", "[workloads]") {
  const auto name = GENERATE(as<std::string>{}, "gpt-tiny", "mlp-outliers", "user-example");
  INFO(name);
  const auto workload = make_workload(name);
  auto a = workload->make_model(7), b = workload->make_model(7), c = workload->make_model(8);
  CHECK(same_parameters(*a, *b));
  CHECK_FALSE(same_parameters(*a, *c));
  const auto x = workload->train_batch(3, 7), y = workload->train_batch(3, 7);
  CHECK(same_bits(x.input, y.input));
  CHECK(same_bits(x.target, y.target));
  CHECK_FALSE(same_bits(x.input, workload->train_batch(4, 7).input));
  const auto e1 = workload->eval_batches(), e2 = make_workload(name)->eval_batches();
  REQUIRE(e1.size() == e2.size());
  CHECK(same_bits(e1[0].input, e2[0].input));
}

TEST_CASE("gpt-tiny starts at the loss of a uniform guess", "[workloads]") {
  const auto workload = make_workload("gpt-tiny");
  auto model = workload->make_model(0);
  torch::NoGradGuard no_grad;
  const double loss = model->loss(workload->eval_batches()[0]).item<double>();
  const double vocabulary = static_cast<double>(model->named_parameters()["head.weight"].size(0));
  CHECK(std::fabs(loss - std::log(vocabulary)) < 0.1);
}

TEST_CASE("convert_model reaches every Linear the workloads call", "[workloads]") {
  const auto name = GENERATE(as<std::string>{}, "gpt-tiny", "mlp", "user-example");
  INFO(name);
  const auto workload = make_workload(name);
  auto model = workload->make_model(0);
  std::size_t linears = 0;
  for (const auto& m : model->modules()) {
    if (dynamic_cast<torch::nn::LinearImpl*>(m.get()) != nullptr) ++linears;
  }
  recipes::Recipe recipe;
  recipe.module_filter.require_dims_divisible_by_16 = false;
  const auto backend = std::make_shared<const SimBackend>();
  const auto converted = convert_model(*model, recipe, backend);
  CHECK(converted.size() == linears);
  CHECK(has_fp8_layers(*model));
  // The forward now runs through the FP8 Linears: they record statistics.
  {
    Fp8Autocast fp8(true);
    model->loss(workload->train_batch(0, 0)).backward();
  }
  for (const auto& linear : collect_linear_stats(*model)) {
    INFO(linear.name);
    CHECK(linear.stats.fp8_gemms[0] > 0);
  }
}

TEST_CASE("Training is deterministic; a run compared with itself diverges by exactly 0",
          "[workloads][training]") {
  const auto workload = make_workload("gpt-tiny");
  TrainingOptions options;
  options.steps = 12;
  options.keep_snapshots = true;
  const auto first = train(*workload, ModelHooks{}, options, nullptr);
  BaselineReference reference;
  reference.parameter_names = first.parameter_names;
  reference.snapshots = first.snapshots;
  options.keep_snapshots = false;
  const auto second = train(*workload, ModelHooks{}, options, &reference);
  REQUIRE(first.train_loss.size() == 12);
  CHECK(first.train_loss == second.train_loss);
  CHECK(first.eval == second.eval);
  REQUIRE(second.divergence.size() == first.snapshots.size());
  for (const auto& [step, w, g] : second.divergence) {
    INFO("step " << step);
    CHECK(w == 0.0);
    CHECK(g == 0.0);
  }
  CHECK(first.train_loss.back() < first.train_loss.front());
}

TEST_CASE("Operand statistics measured only on logged steps give the same rows",
          "[workloads][training]") {
  // ModelHooks::measure_operands turns operand measurement off on steps whose statistics are not
  // logged (and for the eval passes before them, which count into the next step): the logged
  // rows, losses and GEMM counts must not change. FP8 eval passes every 2 steps and statistics
  // every 3: the eval after step 2 counts into step 3's rows, the one after step 4 into none.
  const auto workload = make_workload("gpt-tiny:eval_every=2");
  recipes::Recipe recipe;
  recipe.scaling = recipes::Scaling::current;
  recipe.use_autocast_during_eval = true;
  const auto hooks_with = [&](bool gate) {
    ModelHooks hooks;
    hooks.convert = [recipe](TrainableModel& model) {
      convert_model(model, recipe, std::make_shared<const SimBackend>());
    };
    hooks.use_autocast_during_eval = true;
    hooks.take_step_measurements = [](TrainableModel& model, bool want_rows) {
      StepMeasurements m;
      for (const auto& linear : collect_linear_stats(model)) {
        m.gemm_seconds += static_cast<double>(linear.stats.fp8_gemms[0]);  // a count, not time
        if (!want_rows) continue;
        const OperandStats& op = linear.stats.operand(Operand::kInput, Gemm::kFprop);
        LayerRow row;
        row.layer = linear.name;
        row.count = static_cast<std::int64_t>(op.quantizations);
        row.amax = op.amax;
        row.sqnr_db = op.sqnr_db();
        m.rows.push_back(std::move(row));
      }
      reset_linear_stats(model);
      return m;
    };
    if (gate) {
      hooks.measure_operands = [](TrainableModel& model, bool on) {
        set_measure_operands(model, on);
      };
    }
    return hooks;
  };
  TrainingOptions options;
  options.steps = 7;
  options.statistics_every = 3;
  const auto every_call = train(*workload, hooks_with(false), options, nullptr);
  const auto gated = train(*workload, hooks_with(true), options, nullptr);
  CHECK(gated.train_loss == every_call.train_loss);
  CHECK(gated.eval == every_call.eval);
  CHECK(gated.gemm_seconds == every_call.gemm_seconds);
  REQUIRE(!every_call.layer_statistics.empty());
  const auto rows_json = [](const std::vector<LayerRow>& rows) {
    auto json = nlohmann::json::array();
    for (const auto& row : rows) json.push_back(to_json(row));
    return json.dump();
  };
  CHECK(rows_json(gated.layer_statistics) == rows_json(every_call.layer_statistics));
}

TEST_CASE("Unknown workloads are refused with the known names", "[workloads]") {
  CHECK_THROWS_WITH(make_workload("gpt-huge"),
                    Catch::Contains("unknown workload 'gpt-huge'") && Catch::Contains("gpt-tiny"));
}

}  // namespace fp8lab::experiments
