// fp8lab run --workload W --export-inputs DIR: what another implementation of W needs to train it
// as `fp8lab run` does, bit for bit (tests/python/test_run_parity.py trains it in Python): the
// initial parameters of make_model(seed), the training batches of steps 0..steps-1 and the
// TrainingSchedule. Nothing is trained.
#pragma once

#include <cstdint>
#include <string>

namespace fp8lab::experiments::cli {

// DIR/parameters/NAME.npy: each parameter (float32, its shape) before any conversion;
// DIR/batches/STEP.input.npy and STEP.target.npy: train_batch(step, seed);
// DIR/inputs.json: workload, seed, steps, the schedule's fields and the parameters' names.
void export_workload_inputs(const std::string& workload, std::uint64_t seed, std::int64_t steps,
                            const std::string& dir);

}  // namespace fp8lab::experiments::cli
