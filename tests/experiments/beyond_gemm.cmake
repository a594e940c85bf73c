# Issue 20, L3 (Su et al. 2025): quantization beyond the GEMMs (LayerNorm affine parameters,
# activation functions; experiments/linear/beyond_gemm.hpp) against direct computations with sim's
# MX quantizer, on the residual-mlp block; and fp8lab's exit 2 for a bad value.
fp8lab_add_test(NAME experiments_beyond_gemm_test SOURCES beyond_gemm_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
# L3 at small scale: every arm trains and the switches take effect, over 3 seeds (a 15-run sweep of
# 600 steps through the fp8lab command, about 3 minutes with 2 jobs; the unstable counts are
# printed, not asserted): label torch only, out of the default fast run.
fp8lab_add_test(NAME experiments_beyond_gemm_direction_test
                SOURCES beyond_gemm_direction_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 900 RUNS_FP8LAB)
