// Issue 18 §3-4 end to end on the small MLP (fc1 -> fc2 -> fc3, a few steps): the first
// non-finite value of a planted NaN is named with its step, pass, layer, tensor and GEMM;
// keep_high_precision reaches the Fp8Linears (every layer kept gives the baseline's bits); the
// autoswitch rule records its switches; a converted Linear the model never calls is named.
#include <torch/torch.h>
#undef CHECK  // c10's CHECK would shadow Catch's (see linear_test_support.hpp)
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "experiments/render/write_reports.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/run_executor.hpp"
#include "experiments/stats/ablation.hpp"
#include "experiments/stats/first_non_finite.hpp"
#include "experiments/workloads/linear_call.hpp"
#include "experiments/workloads/registry.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/sweep.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"
#include "tests/support/run_request.hpp"
#include "workload_test_support.hpp"

namespace fp8lab::experiments {
namespace {
using testing::typed;

namespace fs = std::filesystem;

// The MLP with a planted fault: between fc1 and fc2 a frozen Linear `mix` passes fc1's 128
// features through (identity) and reads 16 padding features that are always 0 through a block
// of 1e5 weights. In fp32 the block multiplies zeros and changes nothing; under one E4M3 scale
// per weight tensor (amax 1e5) the identity's 1s become subnormal (1 * 448/1e5 = 0.0045, 2^-9
// steps) and `mix` garbles every feature. The other Linears are the MLP's.
class PlantedModel : public TrainableModel {
 public:
  explicit PlantedModel(std::uint64_t seed) {
    auto generator = make_generator(seed, 0);
    torch::NoGradGuard no_grad;
    auto add = [&](const char* name, std::int64_t in, std::int64_t out) {
      auto linear = register_module(name, torch::nn::Linear(in, out));
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      linear->weight.uniform_(-bound, bound, generator);
      linear->bias.zero_();
    };
    add("fc1", 64, 128);
    auto mix = register_module(
        "mix", torch::nn::Linear(torch::nn::LinearOptions(128 + 16, 128).bias(false)));
    mix->weight.zero_();
    mix->weight.slice(1, 0, 128).copy_(torch::eye(128));
    mix->weight.slice(0, 0, 16).slice(1, 128, 144).fill_(1e5);
    mix->weight.set_requires_grad(false);
    add("fc2", 128, 128);
    add("fc3", 128, 16);
  }
  torch::Tensor loss(const Batch& batch) override {
    auto h = torch::gelu(forward_linear(*this, "fc1", batch.input));
    h = forward_linear(*this, "mix", torch::cat({h, torch::zeros({h.size(0), 16})}, 1));
    h = torch::gelu(forward_linear(*this, "fc2", h));
    return torch::mse_loss(forward_linear(*this, "fc3", h), batch.target);
  }
};

class PlantedWorkload : public test::MlpDataWorkload {
 public:
  PlantedWorkload() : MlpDataWorkload("mlp-planted", "mlp with a frozen mix Linear of 1e5 block") {}
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<PlantedModel>(seed);
  }
};

// The MLP with fc2 called through a C++ member holder, the way LibTorch's own modules call their
// Linears (TransformerEncoderLayer's linear1): convert_model replaces the registered child, the
// holder keeps the old Linear, so the converted fc2 never runs.
class MemberHeldModel : public TrainableModel {
 public:
  explicit MemberHeldModel(std::uint64_t seed) {
    torch::manual_seed(static_cast<std::uint64_t>(seed));
    register_module("fc1", torch::nn::Linear(64, 128));
    fc2_ = register_module("fc2", torch::nn::Linear(128, 128));
    register_module("fc3", torch::nn::Linear(128, 16));
  }
  torch::Tensor loss(const Batch& batch) override {
    auto h = torch::gelu(forward_linear(*this, "fc1", batch.input));
    h = torch::gelu(fc2_(h));
    return torch::mse_loss(forward_linear(*this, "fc3", h), batch.target);
  }

 private:
  torch::nn::Linear fc2_{nullptr};
};

class MemberHeldWorkload : public test::MlpDataWorkload {
 public:
  MemberHeldWorkload()
      : MlpDataWorkload("mlp-member-held", "mlp whose fc2 is called by member holder") {}
  std::shared_ptr<TrainableModel> make_model(std::uint64_t seed) const override {
    return std::make_shared<MemberHeldModel>(seed);
  }
};

// What the process writes to stderr (the run's log) while it lives, kept in `path`.
class StderrToFile {
 public:
  explicit StderrToFile(const fs::path& path) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrToFile() {
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
  }
  StderrToFile(const StderrToFile&) = delete;
  StderrToFile& operator=(const StderrToFile&) = delete;

 private:
  int saved_ = -1;
};

using testing::request_for;

// Each field of `expected` is the site's (a missing field reads as null); the field in a failure.
void check_site(const nlohmann::json& site, const nlohmann::json& expected) {
  for (const auto& [field, value] : expected.items()) {
    INFO("first_non_finite." << field);
    CHECK(site.value(field, nlohmann::json()) == value);
  }
}

}  // namespace

TEST_CASE("A NaN planted in one layer's backward is the first non-finite site",
          "[diagnostics][non_finite]") {
  use_one_torch_thread();
  const testing::Scratch dir("non-finite");
  const ResultsDirectory directory(dir.path());

  auto clean = request_for("scaling: current\n", 5);
  const auto finite = to_json(execute_fp8_run(directory, clean));
  REQUIRE(finite["status"] == "finished");
  CHECK(finite["first_non_finite"].is_null());

  auto faulty = request_for("scaling: current\n", 5);
  faulty.run_id += "-injected";
  faulty.inject_nan = FaultInjection{"fc2", 2, true};
  const auto record = to_json(execute_fp8_run(directory, faulty));
  INFO(record.dump().substr(0, 3000));
  // The NaN reaches the weights in step 2's update: step 3's loss is NaN.
  CHECK(record["status"] == "diverged");
  CHECK(record["diverged_at_step"] == 3);
  const auto& site = record["first_non_finite"];
  REQUIRE(site.is_object());
  // gemm: dgrad quantizes grad_output before wgrad does.
  check_site(site, nlohmann::json::parse(R"({"step": 2, "pass": "backward", "layer": "fc2",
      "tensor": "grad_output", "gemm": "dgrad", "quantized": true,
      "nan_count": 1, "inf_count": 0})"));
  // fc2's grad_output is [batch 64, hidden 128]: the NaN sits at the middle element.
  CHECK(site["shape"] == nlohmann::json::array({64, 128}));
  CHECK(site["first_index"] == 64 * 128 / 2);
  REQUIRE(site["values"].size() == 5);
  CHECK(site["values"][2]["index"] == 64 * 128 / 2);
  CHECK(site["values"][2]["value"].is_null());
  CHECK(site["values"][2]["bits"] == "0x7fc00000");
  CHECK(site["values"][1]["value"].is_number());
  // The history of fc2's (grad_output, dgrad) before: one quantization per earlier step.
  REQUIRE(site["history"].size() == 2);
  CHECK(site["history"][0]["step"] == 0);
  CHECK(site["history"][1]["step"] == 1);
  CHECK(site["history"][1]["amax"].get<double>() > 0.0);
  CHECK(record["fault_injection"]["layer"] == "fc2");

  // The report names it under the run.
  write_reports(ReportOptions{{dir.path()}, {}, {}});
  const std::string md = testing::read_text(dir.path() / "report.md");
  CHECK_THAT(md, Catch::Contains("first non-finite value: step 2, backward, layer `fc2`, "
                                 "grad_output read by dgrad"));
  CHECK_THAT(first_non_finite_text(typed(record)),
             Catch::Contains("[4096] non-finite (0x7fc00000)"));
}

TEST_CASE("A NaN planted in a forward input is found there", "[diagnostics][non_finite]") {
  use_one_torch_thread();
  const testing::Scratch dir("non-finite-fwd");
  const ResultsDirectory directory(dir.path());
  // fc1 in high precision: the NaN is found by the scan of a high-precision operand.
  auto faulty = request_for("scaling: current\nkeep_high_precision: {layers: [fc1]}\n", 3);
  faulty.run_id += "-injected";
  faulty.inject_nan = FaultInjection{"fc1", 1, false};
  const auto record = to_json(execute_fp8_run(directory, faulty));
  const auto& site = record["first_non_finite"];
  REQUIRE(site.is_object());
  check_site(site, nlohmann::json::parse(R"({"step": 1, "pass": "forward", "layer": "fc1",
      "tensor": "input", "gemm": "fprop", "quantized": false})"));
  CHECK(record["status"] == "diverged");
  CHECK(record["diverged_at_step"] == 1);
}

TEST_CASE("keep_high_precision reaches every Fp8Linear", "[diagnostics][keep]") {
  use_one_torch_thread();
  const testing::Scratch dir("keep");
  const ResultsDirectory directory(dir.path());
  const auto some = to_json(execute_fp8_run(
      directory,
      request_for("scaling: current\nkeep_high_precision: {layers: [fc2], wgrad: ['fc.']}\n", 3)));
  REQUIRE(some["status"] == "finished");
  CHECK(some["fp8_gemms"]["fc1"] == nlohmann::json::array({"fprop", "dgrad"}));
  CHECK(some["fp8_gemms"]["fc2"] == nlohmann::json::array());
  CHECK(some["fp8_gemms"]["fc3"] == nlohmann::json::array({"fprop", "dgrad"}));
  // gemm_k holds the K of the GEMMs that run in FP8 only: fc1 (64 -> 128) and fc3 (128 -> 16)
  // keep fprop and dgrad, no Linear runs wgrad in FP8.
  CHECK(some["gemm_k"] ==
        nlohmann::json(
            {{"fprop", {64, 128}}, {"dgrad", {16, 128}}, {"wgrad", nlohmann::json::array()}}));
  // Every Linear kept: the baseline's bits (the Fp8Linears run the baseline's GEMMs).
  const auto all = to_json(execute_fp8_run(
      directory, request_for("scaling: current\nkeep_high_precision: {layers: ['.*']}\n", 3)));
  REQUIRE(all["status"] == "finished");
  CHECK(all["final"]["eval_abs_diff"] == 0.0);
  CHECK(all["final"]["train_loss"] == all["train"].back()["baseline_loss"]);
}

TEST_CASE("The autoswitch rule records when and which GEMM it moved", "[diagnostics][autoswitch]") {
  use_one_torch_thread();
  const testing::Scratch dir("autoswitch");
  const ResultsDirectory directory(dir.path());
  // An MSE threshold every quantization crosses: every FP8 GEMM switches after step 0.
  const auto record = to_json(execute_fp8_run(
      directory, request_for("scaling: current\nautoswitch: {enabled: true, mse: 1e-30}\n", 3)));
  REQUIRE(record["status"] == "finished");
  const auto& switches = record["autoswitch"]["switches"];
  // fc1's dgrad never runs (its input needs no gradient): 3 layers x 3 GEMMs - 1.
  REQUIRE(switches.size() == 8);
  for (const auto& s : switches) {
    CHECK(s["step"] == 0);
    CHECK(s["statistic"] == "mse");
    CHECK(s["value"].get<double>() > 1e-30);
  }
  CHECK(switches[0]["layer"] == "fc1");
  CHECK(switches[0]["gemm"] == "fprop");
  // From step 1 on every GEMM runs in high precision: no statistics rows after step 0.
  for (const auto& row : record["layers"]) CHECK(row["step"] == 0);
  // Off by default: no "autoswitch" in the record.
  const auto plain = to_json(execute_fp8_run(directory, request_for("scaling: current\n", 2)));
  CHECK_FALSE(plain.contains("autoswitch"));
}

TEST_CASE("A converted Linear whose forward never runs is named in the record",
          "[diagnostics][not_run]") {
  use_one_torch_thread();
  register_workload("mlp-member-held", [] { return std::make_unique<MemberHeldWorkload>(); });
  const testing::Scratch dir("not-run");
  const ResultsDirectory directory(dir.path());
  // The MLP calls each Linear by name: every converted Linear ran.
  const auto plain = to_json(execute_fp8_run(directory, request_for("scaling: current\n", 2)));
  REQUIRE(plain["status"] == "finished");
  CHECK(plain["fp8_layers"] == nlohmann::json::array({"fc1", "fc2", "fc3"}));
  CHECK(plain["fp8_linears_not_run"] == nlohmann::json::array());

  auto request = request_for("scaling: current\n", 2);
  request.workload = "mlp-member-held";
  request.run_id = recipes::sweep_run_id(*request.recipe, request.workload, 0);
  const fs::path log = dir.path() / "held.log";
  nlohmann::json held;
  {
    const StderrToFile capture(log);
    held = to_json(execute_fp8_run(directory, request));
  }
  REQUIRE(held["status"] == "finished");
  // The run's log names it once, after the first step.
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK_THAT(text, Catch::Contains("Linear 'fc2' was converted to FP8 but its forward did not run "
                                   "in training step 0"));
  CHECK(text.find("Linear 'fc2'", text.find("Linear 'fc2'") + 1) == std::string::npos);
  CHECK_THAT(text, !Catch::Contains("Linear 'fc1'") && !Catch::Contains("Linear 'fc3'"));
  // fc2 is converted (fp8_layers lists it) but the model calls the old Linear.
  CHECK(held["fp8_layers"] == nlohmann::json::array({"fc1", "fc2", "fc3"}));
  CHECK(held["fp8_linears_not_run"] == nlohmann::json::array({"fc2"}));
  CHECK(typed(held).fp8_linears_not_run.get() == std::vector<std::string>{"fc2"});
}

TEST_CASE("Ablation ranks first the layer with a planted block of outlier weights",
          "[diagnostics][ablate]") {
  use_one_torch_thread();
  register_workload("mlp-planted", [] { return std::make_unique<PlantedWorkload>(); });
  const testing::Scratch dir("ablate");
  const ResultsDirectory directory(dir.path());
  const std::string text = R"(
method: ablate
workloads: [mlp-planted]
seeds: [0, 1, 2]
base: {scaling: current, fp8_format: E4M3}
ablate: {layers: [fc1, mix, fc2, fc3]}
)";
  const auto expansion = recipes::expand(recipes::parse_sweep_text(text, "ablate.yaml"));
  REQUIRE(expansion.runs.size() == 9 * 3);
  std::vector<nlohmann::json> records;
  for (const auto& run : expansion.runs) {
    RunRequest r;
    r.workload = run.workload;
    r.seed = run.seed;
    r.steps = 60;
    r.timing_steps = 1;
    r.recipe = run.recipe;
    r.run_id = run.id;
    r.provenance = sweep_run_provenance(expansion, run, text);
    records.push_back(to_json(execute_fp8_run(directory, r)));
    REQUIRE(records.back()["status"] == "finished");
    REQUIRE(records.back().contains("ablation"));
  }
  // The chaos floor beside the gap: the null run of each seed.
  for (const std::int64_t seed : {0, 1, 2}) {
    RunRequest null_run;
    null_run.workload = "mlp-planted";
    null_run.seed = seed;
    null_run.steps = 60;
    records.push_back(to_json(execute_null_run(directory, null_run)));
  }
  const auto tables = ablation_tables(typed(records));
  REQUIRE(tables.size() == 1);
  INFO(ablation_markdown(tables));
  REQUIRE(tables[0].gap);
  CHECK(tables[0].gap->low() > 0.0);  // the recipe degrades, resolved over 3 seeds
  CHECK_THAT(tables[0].chaos_floor, Catch::Contains("(n=3)"));
  REQUIRE(tables[0].layers.size() == 4);
  CHECK(tables[0].layers[0].layer == "mix");
  CHECK(tables[0].layers[0].share > 0.5);
  CHECK(tables[0].layers[0].removed->low() > 0.0);
  // The report shows the ranking.
  write_reports(ReportOptions{{dir.path()}, {}, {}});
  CHECK_THAT(testing::read_text(dir.path() / "report.md"), Catch::Contains("| 1 | `mix` | all |"));
  const std::string html = testing::read_text(dir.path() / "report.html");
  CHECK_THAT(html, Catch::Contains("<h2>Layer ablation"));
  CHECK(html.find("<td>mix</td>") < html.find("<td>fc1</td>"));
}

}  // namespace fp8lab::experiments

namespace fp8lab::experiments {

// The report's rows are told apart by their labels: NVFP4's arms differ only in nvfp4_mode and
// TE's recipe parts, MXFP4/MXFP6 arms only in the E8M0 mode, and a sub-byte scaling has no FP8
// format of its own (an L7 report once showed four rows all named "nvfp4 HYBRID").
TEST_CASE("recipe labels name the sub-byte scalings' mode and NVFP4's recipe parts", "[labels]") {
  const auto label = [](const std::string& text) {
    return recipe_label(recipes::parse_recipe_text(text, "label.yaml"));
  };
  CHECK(label("scaling: nvfp4\nnvfp4_mode: te\nnvfp4_2d: true\nnvfp4_rht: true\n"
              "nvfp4_stochastic_rounding: true\n") == "nvfp4 te 2d rht sr");
  CHECK(label("scaling: nvfp4\nnvfp4_mode: torchao\n") == "nvfp4 torchao");
  CHECK(label("scaling: mxfp4\n") == "mxfp4 te");
  CHECK(label("scaling: mxfp6_e2m3\nmx_scale_mode: rceil\n") ==
        "mxfp6_e2m3 rceil " + std::string(recipes::name(recipes::TorchaoVersion::kV0_18)));
  CHECK(label("scaling: mxfp8\n") == "mxfp8 te HYBRID");
}

}  // namespace fp8lab::experiments
