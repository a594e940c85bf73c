# Tests of the workloads of issue 20 (llama, residual-mlp, workload options). Included from
# tests/experiments/CMakeLists.txt. Tiny sizes, a few steps each.
# - experiments_workload_options_test: specs, canonical text, errors, ids, sweep entries.
# - experiments_workload_modules_test: RMSNorm, RoPE, attention, SwiGLU, the llama block and the
#   residual-mlp block against float64 references (forward and gradients).
# - experiments_workload_training_test: preset sizes, tiny deterministic training, the eval SE,
#   the early evals' sample (the verdicts' evals bit-identical to whole evals everywhere),
#   and a run through the fp8lab command (reads the corpus scripts/setup makes).
foreach(part options modules)
  fp8lab_add_test(NAME experiments_workload_${part}_test SOURCES workload_${part}_test.cpp
                  LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
endforeach()
fp8lab_add_test(NAME experiments_workload_training_test SOURCES workload_training_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
