# Tests of experiments/workloads, experiments/sweep, experiments/run, experiments/stats
# and experiments/render (sweeps, runs and their reports). Included from
# tests/experiments/CMakeLists.txt (LibTorch builds only).
fp8lab_add_test(NAME experiments_report_results_test SOURCES report_results_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
fp8lab_add_test(NAME experiments_runner_facts_test SOURCES runner_facts_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 600)
fp8lab_add_test(NAME experiments_runner_resume_test SOURCES runner_resume_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 600 RUNS_FP8LAB)
# report.html in headless Chromium (a shell script: it drives the fp8lab command and chromium).
add_test(NAME experiments_report_html_chromium_test
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/report_html_chromium_test.sh $<TARGET_FILE:fp8lab>)
set_tests_properties(experiments_report_html_chromium_test PROPERTIES
                     LABELS torch TIMEOUT 600 SKIP_RETURN_CODE 77)
fp8lab_add_test(NAME experiments_runner_workloads_test SOURCES runner_workloads_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
fp8lab_add_test(NAME experiments_runner_failures_test SOURCES runner_failures_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
fp8lab_add_test(NAME experiments_runner_shard_test SOURCES runner_shard_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 600 RUNS_FP8LAB)
# seeds: auto end to end (issue 41 item 5): pilot, plan, planned seeds, resume; its refusals.
fp8lab_add_test(NAME experiments_runner_seed_plan_test SOURCES runner_seed_plan_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
# The on-trajectory probe engine (probe_engine.hpp), in process on small models.
fp8lab_add_test(NAME experiments_probes_test SOURCES probes_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
# The probes through the fp8lab command: records and archives unchanged, sidecars, bad keys.
fp8lab_add_test(NAME experiments_probes_cli_test SOURCES probes_cli_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
# Precision schedules (issue 43 item 2) through the fp8lab command: the switch, kill and resume,
# the dry run and explain, bad entries.
fp8lab_add_test(NAME experiments_runner_schedule_test SOURCES runner_schedule_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 600 RUNS_FP8LAB)
