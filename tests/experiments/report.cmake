# Tests of the report area (issue 13: report honesty): noise floor and seeds, provenance marks,
# links, heatmap, axes and legends (crafted records), the sweep file's baseline_seeds key, and the
# --heatmap-axes errors of the fp8lab command. Included from tests/experiments/CMakeLists.txt.
fp8lab_add_test(NAME experiments_report_honesty_test SOURCES report_honesty_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
fp8lab_add_test(NAME experiments_report_seeds_test SOURCES report_seeds_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB READS_SOURCE)
# The per-step null (issue 31 §6): the sweep key's arms, the operand noise, a sweep with both arms.
fp8lab_add_test(NAME experiments_null_per_step_test SOURCES null_per_step_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
# Paired verdicts, contrasts, the chaos floor and the short peer marks (issue 20 §2), on crafted
# records; the literature experiments' directions (issue 20 §3, L1 and L2).
fp8lab_add_test(NAME experiments_report_paired_test SOURCES report_paired_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
# The named tests, Holm, power, the sweep key hypotheses and the test columns (issue 31).
fp8lab_add_test(NAME experiments_report_named_tests_test SOURCES report_named_tests_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
fp8lab_add_test(NAME experiments_literature_test SOURCES literature_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
fp8lab_add_test(NAME experiments_report_literature_effects_test
                SOURCES report_literature_effects_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 60)
# The named tests of summary.csv and contrasts.csv recomputed from results.jsonl with scipy (issue
# 31): a small sweep (report_statistics_sweep.yaml: 12 runs of 30 steps; 17.6 min on the 2-core
# machine at load average 20, far less when idle), then an independent
# Python implementation of the tests, Holm, mde80 and seeds_for_80.
if(FP8LAB_PYTHON)
  add_test(NAME experiments_report_statistics_scipy_test
           COMMAND ${FP8LAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/report_statistics_scipy_test.py
                   --fp8lab $<TARGET_FILE:fp8lab>
                   --sweep ${CMAKE_CURRENT_SOURCE_DIR}/report_statistics_sweep.yaml
                   --out ${CMAKE_CURRENT_BINARY_DIR}/report-statistics-sweep)
  set_tests_properties(experiments_report_statistics_scipy_test PROPERTIES LABELS "torch"
                       TIMEOUT 1800)
  # The learning-rate analysis (issue 31 §7) recomputed with numpy/scipy from hand-made records
  # (no training: one `fp8lab report`).
  add_test(NAME experiments_lr_sensitivity_scipy_test
           COMMAND ${FP8LAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/lr_sensitivity_scipy_test.py
                   --fp8lab $<TARGET_FILE:fp8lab>
                   --out ${CMAKE_CURRENT_BINARY_DIR}/lr-sensitivity-records)
  set_tests_properties(experiments_lr_sensitivity_scipy_test PROPERTIES LABELS "torch;fast"
                       TIMEOUT 120)
  # The docs' verdict words against the report rebuilt from the records they quote (issue 42
  # item 7): docs/literature.md's report-words blocks and docs/records/.
  add_test(NAME experiments_docs_words_test
           COMMAND ${FP8LAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/docs_words_test.py
                   --fp8lab $<TARGET_FILE:fp8lab> --root ${PROJECT_SOURCE_DIR}
                   --out ${CMAKE_CURRENT_BINARY_DIR}/docs-words)
  set_tests_properties(experiments_docs_words_test PROPERTIES LABELS "torch;fast" TIMEOUT 120)
endif()
# Seeds planned from power (issue 41 item 5): the plan, Stein's two-stage interval, and a
# simulation of the whole procedure (20,000 replicates per case; arithmetic only, no LibTorch).
fp8lab_add_test(NAME experiments_report_seed_plan_test SOURCES report_seed_plan_test.cpp
                LIBS fp8lab_stats LABELS "fast" TIMEOUT 120)
