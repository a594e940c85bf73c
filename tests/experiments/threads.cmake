# Threads per run (issue 21): the sweep's choice of runs at once x threads per run and the
# --threads range (threads_plan_test, fast); a run's record identical at 1 and 2 threads
# (threads_record_test: six short llama runs, label torch only); the backward pass's two GEMMs as
# one parallel region keep the one-thread bits (threads_independent_test, no LibTorch header).
fp8lab_add_test(NAME experiments_threads_plan_test SOURCES threads_plan_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120 RUNS_FP8LAB)
fp8lab_add_test(NAME experiments_threads_record_test SOURCES threads_record_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 900 RUNS_FP8LAB)
fp8lab_add_test(NAME experiments_threads_independent_test SOURCES threads_independent_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
