# The oracle is CUDA's host-side conversion code in cuda_fp8.h, which compiles with g++: it needs
# the CUDA Toolkit's headers, not a GPU.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  fp8lab_add_test(NAME sim_cast_cuda_oracle_test SOURCES cast_cuda_oracle_test.cpp
                  LIBS fp8lab::sim Threads::Threads LABELS exhaustive TIMEOUT 1800)
  target_include_directories(sim_cast_cuda_oracle_test SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  foreach(oracle e8m0 half)
    fp8lab_add_test(NAME sim_cast_${oracle}_oracle_test SOURCES cast_${oracle}_oracle_test.cpp
                    LIBS fp8lab::sim Threads::Threads LABELS exhaustive TIMEOUT 1800)
    target_include_directories(sim_cast_${oracle}_oracle_test SYSTEM PRIVATE
                               ${CUDAToolkit_INCLUDE_DIRS})
  endforeach()
else()
  message(STATUS "fp8lab: CUDA Toolkit headers not found, the sim_cast_*_oracle_test programs "
                 "are not built")
endif()

fp8lab_add_test(NAME sim_rng_philox_test SOURCES rng_philox_test.cpp LIBS fp8lab::sim LABELS fast)
fp8lab_add_test(NAME sim_quantize_test SOURCES quantize_test.cpp LIBS fp8lab::sim LABELS fast)

# Second oracle: torch's float8 dtypes through LibTorch.
if(FP8LAB_WITH_TORCH)
  fp8lab_add_test(NAME sim_cast_torch_oracle_test SOURCES cast_torch_oracle_test.cpp
                  LIBS fp8lab::sim fp8lab_torch Threads::Threads LABELS "exhaustive;torch"
                  TIMEOUT 1800)
endif()
fp8lab_add_test(NAME sim_cast_trap_test SOURCES cast_trap_test.cpp LIBS fp8lab::sim LABELS fast)
fp8lab_add_test(NAME sim_quantize_bulk_test SOURCES quantize_bulk_test.cpp
                LIBS fp8lab::sim hwy::hwy LABELS fast)
fp8lab_add_test(NAME sim_quantize_scaled_test SOURCES quantize_scaled_test.cpp
                LIBS fp8lab::sim hwy::hwy LABELS fast)
fp8lab_add_test(NAME sim_quantize_bulk_exhaustive_test SOURCES quantize_bulk_exhaustive_test.cpp
                LIBS fp8lab::sim Threads::Threads LABELS exhaustive TIMEOUT 1800)
fp8lab_add_test(NAME sim_quantize_stochastic_test SOURCES quantize_stochastic_test.cpp
                LIBS fp8lab::sim hwy::hwy LABELS fast)
