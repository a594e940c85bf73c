# Issue 18 §3 (precision by layer and GEMM): the keep_high_precision and autoswitch recipe
# fields, and the arms of a `method: ablate` sweep.
fp8lab_add_test(NAME recipes_keep_high_precision_test SOURCES keep_high_precision_test.cpp
                LIBS fp8lab::recipes LABELS fast)
# Issue 43 item 3: the optimizer_states and master_weights recipe fields.
fp8lab_add_test(NAME recipes_optimizer_states_test SOURCES optimizer_states_test.cpp
                LIBS fp8lab::recipes LABELS fast READS_SOURCE)
