# Hardening (issue 19): planted links, silent truncation and drops, encodings, duplicate keys,
# resource limits. Each drives the fp8lab executable as a user would, on tiny mlp sweeps.
foreach(area links ranges report input integrity files)
  fp8lab_add_test(NAME experiments_hardening_${area}_test SOURCES hardening_${area}_test.cpp
                  LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 600 RUNS_FP8LAB)
endforeach()

# libFuzzer over the results readers and the baseline archive check (scripts/fuzz-results), built
# with clang in its own small project as the recipe readers' target is. Bounded run, label fuzz.
find_program(FP8LAB_CLANGXX NAMES clang++ clang++-14)
if(FP8LAB_CLANGXX)
  add_test(NAME experiments_fuzz_results
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz-results --seconds 30
                   --build-dir ${CMAKE_BINARY_DIR}/fuzz-results)
  set_tests_properties(experiments_fuzz_results PROPERTIES LABELS fuzz TIMEOUT 600)
endif()
