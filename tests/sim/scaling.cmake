# Tests of sim/scaling/ (one program per recipe; upstream scenarios and properties).
foreach(area delayed current rowwise block mx properties)
  fp8lab_add_test(NAME sim_scaling_${area}_test SOURCES scaling_${area}_test.cpp
                  LIBS fp8lab::sim LABELS fast)
endforeach()
