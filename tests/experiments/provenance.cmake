# Issue #13 items 3 and 5 (provenance helper): run records' provenance, --version, --env runs and
# the no-FP8 accelerate config through the fp8lab command (provenance_test: tiny mlp runs); the
# sweep's progress lines (progress_test); scripts/main's --jobs (main_script_test.sh); the
# generated build info (build_info_test.sh, on scratch git repositories).
fp8lab_add_test(NAME experiments_provenance_test SOURCES provenance_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB READS_SOURCE)
fp8lab_add_test(NAME experiments_progress_test SOURCES progress_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 60)
add_test(NAME experiments_main_script_test
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/main_script_test.sh $<TARGET_FILE:fp8lab>)
set_tests_properties(experiments_main_script_test PROPERTIES LABELS "torch;fast" TIMEOUT 60)
add_test(NAME experiments_build_info_test
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/build_info_test.sh
                 ${PROJECT_SOURCE_DIR}/cmake/fp8lab_build_info.cmake)
set_tests_properties(experiments_build_info_test PROPERTIES LABELS fast TIMEOUT 60)
# Issue 31 item 10: the CPU numerics every record stores, FP8LAB_CPU_NUMERICS=portable and the
# report's note on pairs from different CPU numerics (cpu_numerics_test: tiny mlp runs).
fp8lab_add_test(NAME experiments_cpu_numerics_test SOURCES cpu_numerics_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
# Issue 31 item 10: portable CPU numerics give the checked-in loss bits (an 8-step llama-xs run)
# on whichever processor CI lands on.
fp8lab_add_test(NAME experiments_portable_golden_test SOURCES portable_golden_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
# Issue 45: the bits of every LibTorch CPU op a training run calls, under portable numerics, against
# the hashes checked in (portable_op_hashes.txt); and every op a step and eval call is in the list.
fp8lab_add_test(NAME experiments_portable_ops_test SOURCES portable_ops_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB READS_SOURCE)
