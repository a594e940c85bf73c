// The llama and residual-mlp workloads: the presets' sizes, deterministic tiny training that
// learns, the eval loss's standard error, the early evals' sample, and a run through the fp8lab command whose records carry
// the workload's options, parameter counts, eval standard error and throughput. Tiny sizes: the
// llama tests read the tokenized corpus that scripts/setup makes (bpe_corpus.hpp).
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "experiments/run/training.hpp"
#include "experiments/workloads/bpe_corpus.hpp"
#include "experiments/workloads/registry.hpp"
#include "experiments/workloads/workload_record.hpp"
#include "tests/support/cli.hpp"

namespace fp8lab::experiments {
namespace {

namespace fs = std::filesystem;

const char* kTinyLlama =
    "llama-xs:layers=1,d_model=32,heads=2,context=16,batch=4,eval_windows=12,steps=8,"
    "eval_every=4,warmup=2,lr=0.01";
const char* kTinyResidual =
    "residual-mlp:d=16,depth=2,batch=64,eval_batch=128,eval_batches=2,steps=30,eval_every=10,"
    "lr=0.01";

TrainingResult train_tiny(const std::string& spec, std::uint64_t seed) {
  const auto workload = make_workload(spec);
  TrainingOptions options;
  options.seed = seed;
  return train(*workload, ModelHooks{}, options, nullptr);
}

}  // namespace

TEST_CASE("The llama presets have the sizes the issue asks for", "[workloads]") {
  const auto s = workload_facts("llama-s", *make_workload("llama-s"));
  CHECK(s.options["d_model"] == 256);
  CHECK(s.options["layers"] == 4);
  CHECK(s.non_embedding_parameter_count == 3213568);  // ~3M: 4 x 803,328 + final norm 256
  const auto m = workload_facts("llama-m", *make_workload("llama-m"));
  CHECK(m.non_embedding_parameter_count >= 25000000);
  const auto xs = workload_facts("llama-xs", *make_workload("llama-xs"));
  CHECK(xs.options["d_model"] == 128);
  CHECK(xs.options["layers"] == 2);
  // The embedding and the head: 2 x vocabulary 4096 x d_model 128.
  CHECK(xs.parameter_count - xs.non_embedding_parameter_count == 2 * 4096 * 128);
  const auto corpus = read_bpe_corpus(default_bpe_corpus_directory());
  CHECK(corpus.vocabulary == 4096);
  CHECK(corpus.train.size() + corpus.eval.size() > 1000000);  // 4.3 MB of text
  CHECK(corpus.eval.size() > 100000);
}

TEST_CASE("Tiny llama and residual-mlp runs are deterministic, learn, and measure the eval SE",
          "[workloads]") {
  for (const std::string spec : {kTinyLlama, kTinyResidual}) {
    INFO(spec);
    const auto a = train_tiny(spec, 3), b = train_tiny(spec, 3);
    REQUIRE(a.status == "finished");
    CHECK(std::memcmp(a.train_loss.data(), b.train_loss.data(),
                      a.train_loss.size() * sizeof(double)) == 0);
    REQUIRE(a.eval.size() >= 2);
    CHECK(a.eval.back().second < a.eval.front().second);  // it learns
    REQUIRE(a.eval_standard_error.size() == a.eval.size());
    for (const double se : a.eval_standard_error) {
      CHECK(std::isfinite(se));
      CHECK(se > 0.0);
      CHECK(se < 0.5 * a.eval.back().second);
    }
    const auto other_seed = train_tiny(spec, 4);
    CHECK(other_seed.train_loss.front() != a.train_loss.front());
  }
  // The llama's initial loss is near ln(vocabulary): the model starts uninformed.
  const auto llama = train_tiny(kTinyLlama, 0);
  CHECK(std::abs(llama.train_loss.front() - std::log(4096.0)) < 0.5);
}

TEST_CASE("Only the evals a verdict reads use the whole eval set, and they are bit-identical to a "
          "run that evaluates the whole set everywhere",
          "[workloads][eval]") {
  // 12 eval points (every step): the first (step 0) and the tail (ceil(10%) = 2: steps 10, 11)
  // are whole; steps 1-9 use every 2nd of the 4 eval batches.
  const std::string spec =
      "llama-xs:layers=1,d_model=32,heads=2,context=16,batch=4,eval_windows=16,steps=12,"
      "eval_every=1,warmup=2,lr=0.01";
  const auto run = [](const Workload& workload, bool autocast_during_eval) {
    TrainingOptions options;
    options.seed = 5;
    options.keep_snapshots = true;  // a baseline's: snapshots at every eval step
    ModelHooks hooks;
    hooks.use_autocast_during_eval = autocast_during_eval;
    return train(workload, hooks, options, nullptr);
  };
  const auto stride_2 = make_workload(spec + ",early_eval_stride=2");
  const auto sampled = run(*stride_2, false);
  const auto whole = run(*make_workload(spec + ",early_eval_stride=1"), false);
  REQUIRE(sampled.status == "finished");
  REQUIRE(sampled.eval.size() == 12);
  REQUIRE(whole.eval.size() == 12);
  REQUIRE(sampled.eval_examples.size() == 12);
  // The trajectory is the same: the eval passes change nothing in the model.
  REQUIRE(sampled.train_loss.size() == whole.train_loss.size());
  CHECK(std::memcmp(sampled.train_loss.data(), whole.train_loss.data(),
                    whole.train_loss.size() * sizeof(double)) == 0);
  REQUIRE(sampled.snapshots.size() == whole.snapshots.size());
  for (std::size_t i = 0; i < whole.snapshots.size(); ++i) {
    INFO("snapshot " << i);
    CHECK(sampled.snapshots[i].step == whole.snapshots[i].step);
    CHECK(torch::equal(sampled.snapshots[i].weights, whole.snapshots[i].weights));
    CHECK(torch::equal(sampled.snapshots[i].gradients, whole.snapshots[i].gradients));
  }
  int sampled_differs = 0;
  for (std::size_t i = 0; i < 12; ++i) {
    INFO("eval " << i << " at step " << sampled.eval[i].first << ": " << sampled.eval[i].second
                 << " vs " << whole.eval[i].second << ", examples " << sampled.eval_examples[i]);
    CHECK(sampled.eval[i].first == whole.eval[i].first);
    CHECK(whole.eval_examples[i] == 16);
    if (i == 0 || i >= 10) {
      CHECK(sampled.eval_examples[i] == 16);
      CHECK(std::memcmp(&sampled.eval[i].second, &whole.eval[i].second, sizeof(double)) == 0);
      CHECK(std::memcmp(&sampled.eval_standard_error[i], &whole.eval_standard_error[i],
                        sizeof(double)) == 0);
    } else {
      CHECK(sampled.eval_examples[i] == 8);  // batches 0 and 2 of 4
      CHECK(std::isfinite(sampled.eval_standard_error[i]));
      sampled_differs += sampled.eval[i].second != whole.eval[i].second;
    }
  }
  CHECK(sampled_differs == 9);  // the sample is another set of windows at every early point
  REQUIRE(sampled.final_eval_example_losses.size() == 16);
  CHECK(sampled.final_eval_example_losses == whole.final_eval_example_losses);

  // With FP8 during eval the eval passes feed the next step's amaxes: every eval is whole.
  const auto fp8_eval = run(*stride_2, true);
  REQUIRE(fp8_eval.eval_examples.size() == 12);
  for (const auto examples : fp8_eval.eval_examples) CHECK(examples == 16);
}

TEST_CASE("fp8lab run takes --workload-set, records options, sizes and eval SE, refuses bad "
          "options with exit 2",
          "[workloads][cli]") {
  const testing::Scratch dir("workload-cli");
  const auto out = (dir / "out").string();
  const std::vector<std::string> run = {FP8LAB_EXECUTABLE, "run",
                                        "--workload",      "llama-xs",
                                        "--workload-set",  "d_model=32",
                                        "--workload-set",  "layers=1",
                                        "--workload-set",  "heads=2",
                                        "--workload-set",  "context=16",
                                        "--workload-set",  "batch=4",
                                        "--workload-set",  "eval_windows=8",
                                        "--workload-set",  "outlier_channels=2",
                                        "--workload-set",  "outlier_scale=50",
                                        "--steps",         "3",
                                        "--set",           "scaling=current",
                                        "--out",           out};
  REQUIRE(testing::run_to_end(run, dir / "run.log") == 0);
  const std::string spec = "llama-xs:batch=4,context=16,d_model=32,eval_windows=8,heads=2,layers=1,"
                           "outlier_channels=2,outlier_scale=50";
  const auto baseline_path =
      fs::path(out) / "runs" /
      "baseline-llama-xs.batch-4.context-16.d_model-32.eval_windows-8.heads-2.layers-1."
      "outlier_channels-2.outlier_scale-50-seed0-fp32-steps3.json";
  INFO(testing::read_text(dir / "run.log"));
  REQUIRE(fs::exists(baseline_path));
  int fp8_records = 0;
  for (const auto& [id, record] : testing::records(out)) {
    INFO(id);
    CHECK(record["status"] == "finished");
    CHECK(record["workload"] == spec);
    CHECK(record["workload_name"] == "llama-xs");
    CHECK(record["workload_options"]["d_model"] == 32);
    CHECK(record["workload_options"]["outlier_scale"] == 50.0);
    CHECK(record["workload_options"]["fp8_head"] == false);
    CHECK(record["parameter_count"].get<std::int64_t>() >
          record["non_embedding_parameter_count"].get<std::int64_t>());
    CHECK(record["final"]["eval_loss_se"].get<double>() > 0.0);
    CHECK(record["eval"][0].contains("loss_se"));
    CHECK(record["final"]["eval_example_losses"].size() == 8);  // eval_windows
    CHECK(record["throughput"]["tokens_per_step"] == 4 * 16);
    CHECK(record["throughput"]["tokens_per_second"].get<double>() > 0.0);
    if (record["kind"] == "fp8") {
      ++fp8_records;
      // The head stays fp32 by default: only the blocks' Linears are FP8.
      for (const auto& layer : record["fp8_layers"]) {
        CHECK(layer.get<std::string>().find("head") == std::string::npos);
      }
      CHECK(record["fp8_layers"].size() == 7);  // q, k, v, o, gate, up, down
    }
  }
  CHECK(fp8_records == 1);

  for (const auto& [setting, message] : std::vector<std::pair<std::string, std::string>>{
           {"d_modle=32", "unknown option 'd_modle'; accepted: layers, d_model"},
           {"d_model=huge", "option d_model='huge' is not accepted; expected an integer"},
           {"d_model", "expected key=value"}}) {
    INFO(setting);
    const auto bad_out = (dir / "bad").string();
    const auto log = dir / "bad.log";
    fs::remove(log);
    CHECK(testing::run_to_end({FP8LAB_EXECUTABLE, "run", "--workload", "llama-xs", "--workload-set",
                               setting, "--set", "scaling=current", "--out", bad_out},
                              log) == 2);
    CHECK_THAT(testing::read_text(log), Catch::Contains(message));
    CHECK_FALSE(fs::exists(bad_out));
  }
}

}  // namespace fp8lab::experiments
