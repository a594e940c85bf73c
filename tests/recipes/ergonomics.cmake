# Issue #13 items 3 and 5 at the recipes level (provenance helper): run sources (--env) and the
# no-FP8 accelerate config (ergonomics_test), upstream changes as data (changed_fields_test).
foreach(area ergonomics changed_fields)
  fp8lab_add_test(NAME recipes_${area}_test SOURCES ${area}_test.cpp LIBS fp8lab::recipes
                  LABELS fast READS_SOURCE)
endforeach()
