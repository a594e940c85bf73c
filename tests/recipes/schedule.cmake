# Precision schedules (issue 43 item 2, recipes/schedule.hpp): reading, canonical strings, sweeps.
fp8lab_add_test(NAME recipes_schedule_test SOURCES schedule_test.cpp LIBS fp8lab::recipes
                LABELS fast READS_SOURCE)
