# Size checks of sim/ entry points (sim/element_count.hpp): issue 13, data integrity.
fp8lab_add_test(NAME sim_integrity_size_test SOURCES integrity_size_test.cpp LIBS fp8lab::sim
                LABELS fast)
# The same checks at gpu/'s host entry points (sim/element_count.hpp is shared like sim/format.hpp).
# Throws before any CUDA call, so it runs (label fast) on machines without a GPU.
if(FP8LAB_HAVE_CUDA)
  fp8lab_add_test(NAME gpu_integrity_size_test
                  SOURCES ${PROJECT_SOURCE_DIR}/tests/gpu/integrity_size_test.cpp
                  LIBS fp8lab::gpu fp8lab::sim LABELS fast)
endif()
