# Sweeps on Slurm (issue 29). experiments_slurm_script_test (fast): the sbatch script's text and
# the checks of --slurm's options; experiments_slurm_cli_test: the fp8lab command's exit 2 for bad
# values and for a --out it cannot write (no cluster needed: it stops before sbatch). Label slurm: array jobs on the
# real one-node cluster of scripts/slurm-up (scripts/test starts it); their main
# (slurm_test_main.cpp) exits 77, reported as skipped with slurm-up's reason, where it could not
# start. RESOURCE_LOCK: the two share the cluster's cores, one at a time.
fp8lab_add_test(NAME experiments_slurm_script_test SOURCES slurm_script_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
fp8lab_add_test(NAME experiments_slurm_cli_test SOURCES slurm_cli_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 300 RUNS_FP8LAB)

add_library(fp8lab_slurm_test_main STATIC slurm_test_main.cpp)
target_link_libraries(fp8lab_slurm_test_main PUBLIC Catch2::Catch2 PRIVATE fp8lab_flags)
target_include_directories(fp8lab_slurm_test_main PRIVATE ${PROJECT_SOURCE_DIR})
foreach(test slurm_array_test slurm_cancel_test)
  fp8lab_add_test(NAME experiments_${test} SOURCES ${test}.cpp MAIN fp8lab_slurm_test_main
                  LIBS fp8lab_experiments LABELS "torch;slurm" TIMEOUT 600 RUNS_FP8LAB
                  RESOURCE_LOCK slurm_cluster)
endforeach()
