# Tests of the report area (issue 13: report honesty): noise floor and seeds, provenance marks,
# links, heatmap, axes and legends (crafted records), the sweep file's baseline_seeds key, and the
# --heatmap-axes errors of the fp8lab command. Included from tests/experiments/CMakeLists.txt.
fp8lab_add_test(NAME experiments_report_honesty_test SOURCES report_honesty_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
fp8lab_add_test(NAME experiments_report_seeds_test SOURCES report_seeds_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
target_compile_definitions(experiments_report_seeds_test PRIVATE
                           FP8LAB_EXECUTABLE="$<TARGET_FILE:fp8lab>"
                           FP8LAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(experiments_report_seeds_test fp8lab)
# Paired verdicts, contrasts, the chaos floor and the short peer marks (issue 20 §2), on crafted
# records; the literature experiments' directions (issue 20 §3, L1 and L2).
fp8lab_add_test(NAME experiments_report_paired_test SOURCES report_paired_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
fp8lab_add_test(NAME experiments_literature_test SOURCES literature_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
fp8lab_add_test(NAME experiments_report_literature_effects_test
                SOURCES report_literature_effects_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 60)
