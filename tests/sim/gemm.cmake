# GEMM models of sim/gemm/ (docs/numerics.md §3). The tests force each SIMD target Highway built.
foreach(area fp32_seq hopper exact high_precision)
  fp8lab_add_test(NAME sim_gemm_${area}_test SOURCES gemm_${area}_test.cpp
                  LIBS fp8lab::sim hwy::hwy LABELS fast)
endforeach()
# Blackwell's block-scaled MMA (sim/gemm/block_scaled.hpp): hand-computed steps here; bit-exact
# against MMA-Sim in tests/python/test_block_scaled_mmasim.py through sim_block_scaled_tiles.
fp8lab_add_test(NAME sim_gemm_block_scaled_test SOURCES gemm_block_scaled_test.cpp
                LIBS fp8lab::sim hwy::hwy LABELS fast)
# sim::gemm on FP4/FP6 QuantizedTensors (blackwell_block, fp32_seq) and the plan executor's RHT
# and stochastic rounding: what the training path runs (docs/fp4.md, "Training").
fp8lab_add_test(NAME sim_gemm_subbyte_quantized_test SOURCES gemm_subbyte_quantized_test.cpp
                LIBS fp8lab::sim LABELS fast)
add_executable(sim_block_scaled_tiles block_scaled_tiles.cpp)
target_link_libraries(sim_block_scaled_tiles PRIVATE fp8lab::sim hwy::hwy fp8lab_flags)
