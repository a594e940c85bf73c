# Data integrity (issue 13): stub records, bad command-line inputs, the output-directory locks.
# Each drives the fp8lab executable on tiny mlp sweeps (--steps 2).
foreach(area records cli lock)
  fp8lab_add_test(NAME experiments_integrity_${area}_test SOURCES integrity_${area}_test.cpp
                  LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300 RUNS_FP8LAB)
endforeach()
