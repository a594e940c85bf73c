# Issue 20, L3 (Su et al. 2025): the recipe fields norm_affine_precision and activation_precision
# (quantization beyond the GEMMs): reading, errors, canonical strings, lowering, explain.
fp8lab_add_test(NAME recipes_beyond_gemm_test SOURCES beyond_gemm_test.cpp
                LIBS fp8lab::recipes LABELS fast)
# Issue 31 §5: the pre-registered instability rule (sweep key instability:) and its watch.
fp8lab_add_test(NAME recipes_instability_test SOURCES instability_test.cpp
                LIBS fp8lab::recipes LABELS fast)
