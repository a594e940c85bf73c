# Tests of experiments/linear/: the FP8 Linear, its baseline, TE's update timing, convert_model.
# (Included from tests/experiments/CMakeLists.txt, which exists only with LibTorch.)
foreach(part baseline gradient timing convert stats accumulation fp4 te_fields)
  fp8lab_add_test(NAME experiments_linear_${part}_test SOURCES linear_${part}_test.cpp
                  LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
endforeach()
# The per-layer statistics, what-if recipes and the Parquet sidecar (layer_stats_sidecar.hpp).
fp8lab_add_test(NAME experiments_layer_stats_test SOURCES layer_stats_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
