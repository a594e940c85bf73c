# GEMM models of sim/gemm/ (NUMERICS.md §3). The tests force each SIMD target Highway built.
foreach(area fp32_seq hopper exact high_precision)
  fp8lab_add_test(NAME sim_gemm_${area}_test SOURCES gemm_${area}_test.cpp
                  LIBS fp8lab::sim hwy::hwy LABELS fast)
endforeach()
