# Issue 43 item 1 (per-role recipes): per_role rules read, checked, canonical, explained.
fp8lab_add_test(NAME recipes_per_role_test SOURCES per_role_test.cpp LIBS fp8lab::recipes
                LABELS fast)
