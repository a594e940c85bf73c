# Size checks of sim/ entry points (sim/element_count.hpp): issue 13, data integrity.
fp8lab_add_test(NAME sim_integrity_size_test SOURCES integrity_size_test.cpp LIBS fp8lab::sim
                LABELS fast)
