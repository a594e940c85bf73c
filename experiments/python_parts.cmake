# The parts of experiments/ that the Python package's extension (python/) links as well, as
# libraries without LibTorch, so that python/ compiles no source of experiments/. The top-level
# CMakeLists.txt includes this file in every build, the package's (FP8LAB_PYTHON_PACKAGE, which
# has no experiments/ layer otherwise) included.
#
# fp8lab_linear_stats: what one quantization measures, as the C++ Linear measures it
# (linear/linear_stats.hpp; fp8lab._C.quantize_stats). Position-independent: the extension is a
# shared module.
add_library(fp8lab_linear_stats STATIC ${CMAKE_CURRENT_LIST_DIR}/linear/linear_stats.cpp)
set_target_properties(fp8lab_linear_stats PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(fp8lab_linear_stats PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(fp8lab_linear_stats PUBLIC fp8lab_flags fp8lab::sim fp8lab::recipes)
# fp8lab_learning_rate: the learning-rate schedule every trainer uses (workloads/learning_rate.hpp,
# header only; fp8lab._C's optimizer step).
add_library(fp8lab_learning_rate INTERFACE)
target_include_directories(fp8lab_learning_rate INTERFACE ${PROJECT_SOURCE_DIR})
