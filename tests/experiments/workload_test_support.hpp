// What the tests that plant something in the MLP share: MlpDataWorkload, a workload with mlp's
// schedule, training batches and evaluation batches, and a model that the test makes
// (make_model), named and described by the test.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiments/workloads/registry.hpp"

namespace fp8lab::experiments::test {

class MlpDataWorkload : public Workload {
 public:
  MlpDataWorkload(std::string name, std::string description)
      : name_(std::move(name)), description_(std::move(description)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  TrainingSchedule schedule() const override { return mlp_->schedule(); }
  Batch train_batch(std::int64_t step, std::uint64_t seed) const override {
    return mlp_->train_batch(step, seed);
  }
  std::vector<Batch> eval_batches() const override { return mlp_->eval_batches(); }

 protected:
  const Workload& mlp() const { return *mlp_; }

 private:
  std::string name_, description_;
  std::unique_ptr<Workload> mlp_ = make_workload("mlp");
};

}  // namespace fp8lab::experiments::test
