# Tests of experiments/workloads, experiments/runner and experiments/report (the sweep runner and
# its reports). Included from tests/experiments/CMakeLists.txt (LibTorch builds only).
fp8lab_add_test(NAME experiments_report_results_test SOURCES report_results_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
