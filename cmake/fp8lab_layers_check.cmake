# cmake -P script of fp8lab_check_layer_includes (fp8lab_layers.cmake): FOLDER, ALLOWED (a list),
# DIR, STAMP.
cmake_policy(VERSION 3.25)
file(GLOB_RECURSE files ${DIR}/*.cpp ${DIR}/*.hpp)
set(problems "")
foreach(file IN LISTS files)
  file(STRINGS ${file} lines REGEX "^#include \"experiments/")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^#include \"experiments/([a-z_0-9]+)/" _ "${line}")
    set(included ${CMAKE_MATCH_1})
    if(included AND NOT included IN_LIST ALLOWED)
      string(APPEND problems "\n  ${file}: ${line}")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "experiments/${FOLDER}/ may include only experiments/{${ALLOWED}}/ "
                      "(docs/architecture.md, \"Inside experiments/\"); these include another "
                      "folder:${problems}")
endif()
file(WRITE ${STAMP} "")
