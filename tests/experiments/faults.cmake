# Failures of the machine (issue 33): a small mlp sweep with a fault at each file write and each run
# process in turn (FP8LAB_FAULT_WRITE, FP8LAB_FAULT_KILL_CHILD), then --resume; and on a real small
# tmpfs where mounting is allowed. Drives the fp8lab executable: label torch, not fast.
fp8lab_add_test(NAME experiments_faults_test SOURCES faults_test.cpp LIBS fp8lab_experiments
                LABELS torch TIMEOUT 900 RUNS_FP8LAB)
