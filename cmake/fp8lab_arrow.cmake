# Apache Arrow and Parquet (C++) for the per-layer statistics and probe sidecars
# (docs/results-schema.md, "layer statistics sidecar", "Probe sidecar"): the headers and shared libraries that PyPI's pyarrow wheel ships,
# so that the project needs no Arrow build of its own and pandas reads what fp8lab writes with the
# same library.
#
# Defines fp8lab::arrow and fp8lab::parquet (imported shared libraries). Only
# experiments/results/parquet_table.{hpp,cpp} and the sidecars' .cpp files that include it
# (layer_stats_sidecar.cpp, probe_sidecar.cpp) include their headers.
#
# Where the wheel is, first found wins:
#   -DFP8LAB_ARROW_ROOT=DIR    a directory with include/arrow, include/parquet and the libraries
#   FP8LAB_PYTHON's pyarrow    pyarrow.get_include(), pyarrow.get_library_dirs()
#   .deps/pyarrow              the copy scripts/device-deps makes for a machine with no registry
#
# The wheel ships only versioned names (libarrow.so.2600, no libarrow.so link); the imported
# targets point at those files, so nothing has to be linked into site-packages
# (pyarrow.create_library_symlinks() is not needed). Its SO version is read from
# arrow/util/config.h.
#
# ABI: the manylinux_2_28 wheel is built with the C++11 std::string ABI, as LibTorch 2.x wheels
# are; a mismatch would fail at link time with undefined std::__cxx11 symbols, so configure checks
# both and says which one differs. The wheel needs GLIBCXX 3.4.22 at most (Debian 12 has 3.4.30).

set(_arrow_include "")
set(_arrow_libdir "")
if(FP8LAB_ARROW_ROOT)
  set(_arrow_include "${FP8LAB_ARROW_ROOT}/include")
  set(_arrow_libdir "${FP8LAB_ARROW_ROOT}")
elseif(FP8LAB_PYTHON)
  execute_process(
    COMMAND "${FP8LAB_PYTHON}" -c
            "import pyarrow; print(pyarrow.get_include()); print(pyarrow.get_library_dirs()[0])"
    OUTPUT_VARIABLE _arrow_paths OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _arrow_rc
    ERROR_QUIET)
  if(_arrow_rc EQUAL 0)
    string(REPLACE "\n" ";" _arrow_paths "${_arrow_paths}")
    list(GET _arrow_paths 0 _arrow_include)
    list(GET _arrow_paths 1 _arrow_libdir)
  endif()
endif()
if(NOT EXISTS "${_arrow_include}/arrow/util/config.h" AND
   EXISTS "${PROJECT_SOURCE_DIR}/.deps/pyarrow/include/arrow/util/config.h")
  set(_arrow_include "${PROJECT_SOURCE_DIR}/.deps/pyarrow/include")
  set(_arrow_libdir "${PROJECT_SOURCE_DIR}/.deps/pyarrow")
endif()
if(NOT EXISTS "${_arrow_include}/arrow/util/config.h")
  message(FATAL_ERROR "fp8lab: Arrow/Parquet C++ not found (the layer statistics sidecars need "
                      "them). Install pyarrow into the Python that FP8LAB_PYTHON names (scripts/"
                      "setup does), point -DFP8LAB_ARROW_ROOT at an unpacked pyarrow wheel, or run "
                      "scripts/device-deps to copy one into .deps/pyarrow.")
endif()

file(STRINGS "${_arrow_include}/arrow/util/config.h" _arrow_so_line
     REGEX "^#define ARROW_SO_VERSION \"[0-9]+\"")
string(REGEX MATCH "[0-9]+" FP8LAB_ARROW_SO_VERSION "${_arrow_so_line}")
file(STRINGS "${_arrow_include}/arrow/util/config.h" _arrow_version_line
     REGEX "^#define ARROW_VERSION_STRING ")
string(REGEX MATCH "[0-9.]+" FP8LAB_ARROW_VERSION "${_arrow_version_line}")

foreach(_lib arrow parquet)
  set(_file "${_arrow_libdir}/lib${_lib}.so.${FP8LAB_ARROW_SO_VERSION}")
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "fp8lab: ${_file} is missing (Arrow ${FP8LAB_ARROW_VERSION} headers in "
                        "${_arrow_include}); the pyarrow wheel ships lib${_lib}.so.<SO version>")
  endif()
  add_library(fp8lab::${_lib} SHARED IMPORTED GLOBAL)
  set_target_properties(fp8lab::${_lib} PROPERTIES
    IMPORTED_LOCATION "${_file}"
    IMPORTED_SONAME "lib${_lib}.so.${FP8LAB_ARROW_SO_VERSION}"
    # SYSTEM (the default for imported targets): Arrow's headers do not pass -Wconversion.
    INTERFACE_INCLUDE_DIRECTORIES "${_arrow_include}")
endforeach()
set_target_properties(fp8lab::parquet PROPERTIES INTERFACE_LINK_LIBRARIES fp8lab::arrow)

# The std::string ABI of the wheel's libraries against LibTorch's (both must be the C++11 ABI
# that g++ uses by default).
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR "fp8lab: LibTorch uses the pre-C++11 std::string ABI but pyarrow's Arrow "
                      "${FP8LAB_ARROW_VERSION} (manylinux_2_28) the C++11 one: they cannot share "
                      "one process. Use a LibTorch built with _GLIBCXX_USE_CXX11_ABI=1.")
endif()
message(STATUS "fp8lab: Arrow/Parquet ${FP8LAB_ARROW_VERSION} (SO ${FP8LAB_ARROW_SO_VERSION}) "
               "from ${_arrow_libdir}")
