// Runs that go wrong are recorded, never lost: a training loss that turns non-finite stops the run
// with status "diverged" at that step; a run that throws is recorded as "failed" with the message.
// Both leave a record that the reports read, and the process goes on (the sweep's next run).
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "experiments/linear/convert_model.hpp"
#include "experiments/render/write_reports.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/stats/analysis.hpp"
#include "experiments/workloads/registry.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"
#include "workload_test_support.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::typed;

// The MLP, except that with FP8 layers its 6th training loss (step 5) is NaN: a run that diverges
// while its baseline does not.
class NanAtStepFiveModel : public TrainableModel {
 public:
  explicit NanAtStepFiveModel(std::shared_ptr<TrainableModel> inner)
      : inner_(register_module("inner", std::move(inner))) {}
  torch::Tensor loss(const Batch& batch) override {
    auto loss = inner_->loss(batch);
    if (is_training() && has_fp8_layers(*this) && ++training_calls_ == 6) {
      loss = loss * std::numeric_limits<float>::quiet_NaN();
    }
    return loss;
  }

 private:
  std::shared_ptr<TrainableModel> inner_;
  int training_calls_ = 0;
};

class NanAtStepFive : public test::MlpDataWorkload {
 public:
  NanAtStepFive() : MlpDataWorkload("nan-at-step-5", "mlp whose FP8 loss is NaN at step 5") {}
  TrainingSchedule schedule() const override {
    auto s = mlp().schedule();
    s.steps = 12;
    s.eval_every = 4;
    return s;
  }
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<NanAtStepFiveModel>(mlp().make_model(seed));
  }
};

}  // namespace

TEST_CASE("A diverged run is recorded at its step; a throwing run is recorded as failed",
          "[runner][failures]") {
  use_one_torch_thread();
  register_workload("nan-at-step-5", [] { return std::make_unique<NanAtStepFive>(); });
  const testing::Scratch dir("failures");
  const ResultsDirectory directory(dir);

  RunRequest diverging;
  diverging.workload = "nan-at-step-5";
  diverging.recipe = recipes::Recipe{};
  diverging.run_id = recipes::sweep_run_id(*diverging.recipe, diverging.workload, 0);
  const auto diverged = to_json(execute_fp8_run(directory, diverging));
  INFO(diverged.dump().substr(0, 1500));
  const auto baseline = nlohmann::json::parse(
      read_text(directory.run_record_path("baseline-nan-at-step-5-seed0-fp32")));
  CHECK(baseline["status"] == "finished");
  CHECK(diverged["status"] == "diverged");
  CHECK(diverged["diverged_at_step"] == 5);
  CHECK(diverged["steps_completed"] == 5);
  CHECK(diverged["train"].size() == 6);
  CHECK(diverged["train"][5]["loss"].is_null());  // NaN/Inf are written as null
  CHECK(run_verdict(typed(diverged)) == "diverged");

  RunRequest throwing;
  throwing.workload = "no-such-workload";
  throwing.recipe = recipes::Recipe{};
  throwing.run_id = "0123456789abcdef";
  const auto failed = to_json(execute_fp8_run(directory, throwing));
  CHECK(failed["status"] == "failed");
  CHECK_THAT(failed["error"].get<std::string>(), Catch::Contains("unknown workload"));
  CHECK(run_verdict(typed(failed)) == "error");

  // The reports take all of them.
  const auto paths = write_reports(ReportOptions{{dir}, {}, {}});
  CHECK(paths.records == 3);  // the baseline, the diverged run, the failed run
}

}  // namespace fp8lab::experiments
