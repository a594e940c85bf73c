# The NVFP4 recipe's other parts (issue 28 item 3): the random Hadamard transform (sim/rht.hpp)
# and E2M1 stochastic rounding (sim/fp4_stochastic.hpp). sim_rht_chunks feeds the RHT to the
# MMA-Sim comparison in tests/python/test_block_scaled_mmasim.py.
fp8lab_add_test(NAME sim_rht_test SOURCES rht_test.cpp LIBS fp8lab::sim hwy::hwy LABELS fast)
fp8lab_add_test(NAME sim_fp4_stochastic_test SOURCES fp4_stochastic_test.cpp LIBS fp8lab::sim hwy::hwy
                LABELS fast)
add_executable(sim_rht_chunks rht_chunks.cpp)
target_link_libraries(sim_rht_chunks PRIVATE fp8lab::sim hwy::hwy fp8lab_flags)
# Tseng et al.'s MXFP4 backward (issue 43 item 5): dither_scale and the 64-point RHT against a
# reference written from their code, on every SIMD target (links Highway for the target loop).
fp8lab_add_test(NAME sim_scaling_mx_dither_test SOURCES scaling_mx_dither_test.cpp
                LIBS fp8lab::sim hwy::hwy LABELS fast)
