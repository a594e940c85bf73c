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
