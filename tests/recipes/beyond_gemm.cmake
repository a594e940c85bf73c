# Issue 20, L3 (Su et al. 2025): the recipe fields norm_affine_precision and activation_precision
# (quantization beyond the GEMMs): reading, errors, canonical strings, lowering, explain.
fp8lab_add_test(NAME recipes_beyond_gemm_test SOURCES beyond_gemm_test.cpp
                LIBS fp8lab::recipes LABELS fast)
