# GEMM models of sim/gemm/ (NUMERICS.md §3).
fp8lab_add_test(NAME sim_gemm_fp32_seq_test SOURCES gemm_fp32_seq_test.cpp LIBS fp8lab::sim
                LABELS fast)
fp8lab_add_test(NAME sim_gemm_hopper_test SOURCES gemm_hopper_test.cpp LIBS fp8lab::sim
                LABELS fast)
fp8lab_add_test(NAME sim_gemm_high_precision_test SOURCES gemm_high_precision_test.cpp
                LIBS fp8lab::sim LABELS fast)
fp8lab_add_test(NAME sim_gemm_exact_test SOURCES gemm_exact_test.cpp LIBS fp8lab::sim
                LABELS fast)
