# Issue 18 §3-4 (find what breaks): the ablation ranking on made-up records (fast), and end to
# end on the MLP the first non-finite site of a planted NaN, keep_high_precision, the autoswitch
# rule and an ablation that finds a layer fed 1e4 outliers (torch; about a minute of CPU).
fp8lab_add_test(NAME experiments_ablation_report_test SOURCES ablation_report_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 120)
fp8lab_add_test(NAME experiments_diagnostics_test SOURCES diagnostics_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 600)
# Issue 43 item 3: QuantizedAdamW against sim/optim, and the record with and without the option
# (torch; a few MLP runs of 4 steps).
fp8lab_add_test(NAME experiments_optimizer_states_test SOURCES optimizer_states_test.cpp
                LIBS fp8lab_experiments LABELS torch TIMEOUT 600)
