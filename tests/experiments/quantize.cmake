# fp8lab quantize (issue 28, item 5; bf16, stacks, single-level NVFP4 and fp8lab-quantize: issue
# 43): the command's files, refusals and write faults, and their bytes against torchao 0.18 read
# through numpy (tests/python/test_quantize_cli.py).
fp8lab_add_test(NAME experiments_quantize_cli_test SOURCES quantize_cli_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB
                DEFINES FP8LAB_QUANTIZE_EXECUTABLE="$<TARGET_FILE:fp8lab-quantize>")
add_dependencies(experiments_quantize_cli_test fp8lab-quantize)
if(FP8LAB_PYTHON)
  add_test(NAME experiments_quantize_torchao_test
           COMMAND ${FP8LAB_PYTHON} -m pytest -q -p no:cacheprovider
                   ${PROJECT_SOURCE_DIR}/tests/python/test_quantize_cli.py)
  set_tests_properties(experiments_quantize_torchao_test PROPERTIES LABELS "fast;torch"
                       TIMEOUT 900 ENVIRONMENT
                       "FP8LAB_EXECUTABLE=$<TARGET_FILE:fp8lab>;FP8LAB_QUANTIZE_EXECUTABLE=$<TARGET_FILE:fp8lab-quantize>;FP8LAB_SIM_FP4_QUANTIZE=$<TARGET_FILE:sim_fp4_quantize>")
endif()
