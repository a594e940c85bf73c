# Third-party packages. All come from Debian (scripts/setup installs them) except LibTorch, which
# comes from the pinned `torch` wheel in the project-local .venv/ (see README "Dependencies").
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(hwy REQUIRED)            # Google Highway: SIMD with runtime dispatch (SSE4/AVX2/AVX-512)
find_package(yaml-cpp REQUIRED)
if(NOT FP8LAB_PYTHON_PACKAGE)  # experiments/ and tests/ only
  find_package(nlohmann_json 3 REQUIRED)
  find_package(CLI11 REQUIRED)
  find_package(Catch2 2 REQUIRED)
  find_package(ZLIB REQUIRED)        # CRC-32 and inflate: the baseline archive check
  # Boost.Math (header-only): the t, noncentral t, binomial and hypergeometric distributions of the
  # report's tests and power figures (experiments/stats/paired_statistics.cpp).
  find_package(Boost 1.74 REQUIRED)
endif()
if(FP8LAB_BENCH)
  find_package(benchmark REQUIRED)
  find_package(Eigen3 3.3 REQUIRED NO_MODULE)
endif()

# --- CUDA: gpu/ is built whenever nvcc is found -------------------------------------------------
# CMake 3.25 knows no CUDA20 dialect for nvcc; kernels and the headers they share with sim/
# (format.hpp) are C++17. Set even when gpu/ is off: LibTorch's CMake config enables CUDA itself
# and would otherwise inherit C++20 from CMAKE_CXX_STANDARD and fail.
set(CMAKE_CUDA_STANDARD 17)
set(FP8LAB_HAVE_CUDA OFF)
if(FP8LAB_WITH_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # sm_90a: Hopper (H100/H200) machine code with its arch-specific features; compute_80 PTX:
    # a portable target that any newer GPU's driver JIT-compiles.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90a-real 80-virtual)
    endif()
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(FP8LAB_HAVE_CUDA ON)
    message(STATUS "fp8lab: building gpu/ with ${CMAKE_CUDA_COMPILER} for ${CMAKE_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "fp8lab: nvcc not found, gpu/ is NOT built (GPU tests will not exist in this tree)")
  endif()
else()
  message(STATUS "fp8lab: FP8LAB_WITH_CUDA=OFF, gpu/ is not built")
endif()

# --- LibTorch: from the project's .venv unless the caller points CMAKE_PREFIX_PATH elsewhere ------
if(FP8LAB_WITH_TORCH)
  if(NOT Torch_DIR)
    set(_fp8lab_python "${PROJECT_SOURCE_DIR}/.venv/bin/python")
    if(DEFINED ENV{FP8LAB_PYTHON})
      set(_fp8lab_python "$ENV{FP8LAB_PYTHON}")
    endif()
    execute_process(
      COMMAND "${_fp8lab_python}" -c "import torch; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _torch_rc)
    if(NOT _torch_rc EQUAL 0)
      message(FATAL_ERROR "fp8lab: cannot import torch with ${_fp8lab_python}. Run scripts/setup, "
                          "or configure with -DFP8LAB_WITH_TORCH=OFF to build without experiments/.")
    endif()
    list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
    set(FP8LAB_PYTHON "${_fp8lab_python}" CACHE FILEPATH "Python with torch (for tests that use it)")
  endif()
  # TorchConfig appends its own -gencode list and defines to CMAKE_CUDA_FLAGS, and its
  # Caffe2/public/cuda.cmake sets CMAKE_CUDA_ARCHITECTURES to OFF ("pytorch is not compatible with
  # CMAKE_CUDA_ARCHITECTURES"), which left every gpu/ object with nvcc's default architecture
  # (sm_75) instead of the ones chosen above, a -D on the command line included. gpu/ does not use
  # LibTorch: both are put back (tests/gpu's gpu_architectures_test reads the objects).
  set(_fp8lab_cuda_flags "${CMAKE_CUDA_FLAGS}")
  set(_fp8lab_cuda_architectures "${CMAKE_CUDA_ARCHITECTURES}")
  find_package(Torch REQUIRED)
  set(CMAKE_CUDA_FLAGS "${_fp8lab_cuda_flags}")
  if(FP8LAB_HAVE_CUDA)
    set(CMAKE_CUDA_ARCHITECTURES "${_fp8lab_cuda_architectures}")
  endif()

  # fp8lab_torch: what a target that uses LibTorch links.
  # - The torch wheel's CUDA libraries (nvidia/*/lib in site-packages) go first on the link and run
  #   paths, so that the linker and the loader take them (one libcudart for torch and gpu/), not an
  #   older copy from the system toolkit (e.g. its libnccl lacks symbols libtorch_cuda needs).
  # - LibTorch ships fmt 12 headers in its include dir, which shadow Debian's fmt 9: experiments/
  #   uses those headers in header-only mode instead of linking Debian's libfmt.
  get_filename_component(_torch_site "${Torch_DIR}/../../../.." ABSOLUTE)
  file(GLOB _nvidia_lib_dirs LIST_DIRECTORIES true "${_torch_site}/nvidia/*/lib")
  add_library(fp8lab_torch INTERFACE)
  target_link_libraries(fp8lab_torch INTERFACE ${TORCH_LIBRARIES})
  target_compile_definitions(fp8lab_torch INTERFACE FMT_HEADER_ONLY=1)
  foreach(_dir IN LISTS _nvidia_lib_dirs)
    target_link_options(fp8lab_torch INTERFACE "LINKER:-rpath-link,${_dir}" "LINKER:-rpath,${_dir}")
  endforeach()
  message(STATUS "fp8lab: LibTorch ${Torch_VERSION} from ${Torch_DIR}")
  include(${PROJECT_SOURCE_DIR}/cmake/fp8lab_arrow.cmake)  # the layer statistics sidecars
endif()
