# The include direction inside experiments/ (docs/architecture.md, "Inside experiments/"), checked
# at build time: fp8lab_check_layer_includes(TARGET FOLDER ALLOWED F...) makes TARGET depend on a
# check that every .cpp and .hpp file of experiments/FOLDER includes from experiments/ only the
# folders F..., and fails the build naming the file, the line and the include otherwise. It runs
# again when a file of FOLDER changes.
function(fp8lab_check_layer_includes target folder)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "ALLOWED")
  set(dir ${PROJECT_SOURCE_DIR}/experiments/${folder})
  file(GLOB_RECURSE files CONFIGURE_DEPENDS ${dir}/*.cpp ${dir}/*.hpp)
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/layers/${folder}.checked)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DFOLDER=${folder} "-DALLOWED=${arg_ALLOWED}" -DDIR=${dir}
            -DSTAMP=${stamp} -P ${PROJECT_SOURCE_DIR}/cmake/fp8lab_layers_check.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/fp8lab_layers_check.cmake
    COMMENT "Checking the includes of experiments/${folder}/ (may include: ${arg_ALLOWED})"
    VERBATIM)
  add_custom_target(${target}_${folder}_layer DEPENDS ${stamp})
  add_dependencies(${target} ${target}_${folder}_layer)
endfunction()

# The call direction, checked at link time: fp8lab_check_layer_links(TOP LIB...) links each LIB
# whole (every object, called or not) into a program of its own, <LIB>_link_check, with only the
# libraries LIB links, and makes TOP depend on those programs. A function of LIB that calls a
# function of a library LIB does not link (a layer above it) is an undefined symbol there, and
# the build of TOP fails naming the symbol and the object that calls it. The programs are never
# run.
function(fp8lab_check_layer_links top)
  set(main ${CMAKE_CURRENT_BINARY_DIR}/layers/link_check_main.cpp)
  file(CONFIGURE OUTPUT ${main} CONTENT "int main() { return 0; }\n")
  foreach(lib IN LISTS ARGN)
    add_executable(${lib}_link_check ${main})
    target_link_libraries(${lib}_link_check PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${lib}>")
    add_dependencies(${top} ${lib}_link_check)
  endforeach()
endfunction()
