# Hardening (issue 19): planted links, silent truncation and drops, encodings, duplicate keys,
# resource limits. Each drives the fp8lab executable as a user would, on tiny mlp sweeps.
foreach(area links ranges report input integrity)
  fp8lab_add_test(NAME experiments_hardening_${area}_test SOURCES hardening_${area}_test.cpp
                  LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 600)
  target_compile_definitions(experiments_hardening_${area}_test PRIVATE
                             FP8LAB_EXECUTABLE="$<TARGET_FILE:fp8lab>")
  add_dependencies(experiments_hardening_${area}_test fp8lab)
endforeach()

