# The oracle is CUDA's host-side conversion code in cuda_fp8.h, which compiles with g++: it needs
# the CUDA Toolkit's headers, not a GPU.
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  fp8lab_add_test(NAME sim_cast_cuda_oracle_test SOURCES cast_cuda_oracle_test.cpp
                  LIBS fp8lab::sim Threads::Threads LABELS exhaustive TIMEOUT 1800)
  target_include_directories(sim_cast_cuda_oracle_test SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  foreach(oracle e8m0 half subbyte_cuda)
    fp8lab_add_test(NAME sim_cast_${oracle}_oracle_test SOURCES cast_${oracle}_oracle_test.cpp
                    LIBS fp8lab::sim Threads::Threads LABELS exhaustive TIMEOUT 1800)
    target_include_directories(sim_cast_${oracle}_oracle_test SYSTEM PRIVATE
                               ${CUDAToolkit_INCLUDE_DIRS})
  endforeach()
else()
  message(STATUS "fp8lab: CUDA Toolkit headers not found, the sim_cast_*_oracle_test programs "
                 "are not built")
endif()

# Sub-byte formats (E2M1, E2M3, E3M2): hand-picked casts and each peer's NaN/-0 mode; packing.
fp8lab_add_test(NAME sim_cast_subbyte_test SOURCES cast_subbyte_test.cpp LIBS fp8lab::sim
                LABELS fast)
fp8lab_add_test(NAME sim_pack_test SOURCES pack_test.cpp LIBS fp8lab::sim LABELS fast)
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
# Third oracle for the sub-byte formats: ml_dtypes on every fp32 and bf16 input, torchao on every
# NaN and a stride of the rest (cast_subbyte_ml_dtypes_oracle.py), through the Python that
# FP8LAB_PYTHON names or the project's .venv (scripts/requirements.txt pins both packages).
# sim_subbyte_codes streams sim's codes to it. Measured on the shared 2-core machine under load:
# 10.5 minutes wall, 2.1 minutes of Python CPU (the driver runs beside it): exhaustive.
add_executable(sim_subbyte_codes subbyte_codes.cpp)
target_link_libraries(sim_subbyte_codes PRIVATE fp8lab::sim fp8lab_flags)
set(_fp8lab_oracle_python "${FP8LAB_PYTHON}")
if(NOT _fp8lab_oracle_python AND EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  set(_fp8lab_oracle_python "${PROJECT_SOURCE_DIR}/.venv/bin/python")
endif()
if(_fp8lab_oracle_python)
  add_test(NAME sim_cast_subbyte_ml_dtypes_oracle_test
           COMMAND ${_fp8lab_oracle_python}
                   ${CMAKE_CURRENT_SOURCE_DIR}/cast_subbyte_ml_dtypes_oracle.py
                   $<TARGET_FILE:sim_subbyte_codes>)
  set_tests_properties(sim_cast_subbyte_ml_dtypes_oracle_test PROPERTIES LABELS exhaustive
                       TIMEOUT 3600)
else()
  message(STATUS "fp8lab: no Python (FP8LAB_PYTHON or .venv), sim_cast_subbyte_ml_dtypes_oracle_test "
                 "is not registered")
endif()

# MXFP4 / MXFP6 / NVFP4 against torchao 0.18 (tests/python/test_fp4_scaling_torchao.py):
# sim_fp4_quantize writes sim's codes, raw scale bytes and NVFP4 global scale for one tensor.
add_executable(sim_fp4_quantize fp4_quantize_dump.cpp)
target_link_libraries(sim_fp4_quantize PRIVATE fp8lab::sim fp8lab_flags)
if(_fp8lab_oracle_python)
  add_test(NAME sim_fp4_scaling_torchao_test
           COMMAND ${_fp8lab_oracle_python} -m pytest -q -p no:cacheprovider
                   ${PROJECT_SOURCE_DIR}/tests/python/test_fp4_scaling_torchao.py)
  set_tests_properties(sim_fp4_scaling_torchao_test PROPERTIES LABELS "fast;torch" TIMEOUT 900
                       ENVIRONMENT "FP8LAB_SIM_FP4_QUANTIZE=$<TARGET_FILE:sim_fp4_quantize>")
  # nvfp4_mode torchao_training against NVFP4TrainingConfig's Triton kernels under Triton's
  # interpreter (tests/python/test_nvfp4_training_torchao.py; skipped without torchao or triton).
  add_test(NAME sim_nvfp4_training_torchao_test
           COMMAND ${_fp8lab_oracle_python} -m pytest -q -rs -p no:cacheprovider
                   ${PROJECT_SOURCE_DIR}/tests/python/test_nvfp4_training_torchao.py)
  set_tests_properties(sim_nvfp4_training_torchao_test PROPERTIES LABELS "fast;torch" TIMEOUT 900
                       ENVIRONMENT "FP8LAB_SIM_FP4_QUANTIZE=$<TARGET_FILE:sim_fp4_quantize>")
endif()

# Optimizer-state and master-weight precision (sim/optim/, issue 43 item 3).
fp8lab_add_test(NAME sim_optim_adamw_test SOURCES optim_adamw_test.cpp LIBS fp8lab::sim
                LABELS fast)
