# Hardening (issue 19): planted links, silent truncation and drops, encodings, duplicate keys,
# resource limits. Each drives the fp8lab executable as a user would, on tiny mlp sweeps.
foreach(area links ranges report input integrity files)
  fp8lab_add_test(NAME experiments_hardening_${area}_test SOURCES hardening_${area}_test.cpp
                  LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 600 RUNS_FP8LAB)
endforeach()

# libFuzzer over the results readers and the baseline archive check (scripts/fuzz-results).
fp8lab_add_fuzz_test(NAME experiments_fuzz_results SCRIPT scripts/fuzz-results SECONDS 30
                     TIMEOUT 600)
