# Issue 43 item 1: a per_role recipe (NVFP4 MLP, MXFP8 attention) trains llama-xs for 6 steps
# through the fp8lab command; its record's fp8_plans, explain's text, exit 2 for an unknown role,
# the warning for a pattern that matches no Linear.
fp8lab_add_test(NAME experiments_per_role_test SOURCES per_role_run_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 600 RUNS_FP8LAB READS_SOURCE)
