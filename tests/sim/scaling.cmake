# Tests of sim/scaling/ (one program per recipe; upstream scenarios and properties; mx_versions:
# the torchao-0.18 and torchao-main MX scale modes; mx_bump: Su et al.'s exponent bump is rceil;
# stats: the sidecar's MSE, kurtosis and blockwise dynamic range; threads: the banded executor on
# threads; nvfp4: NVFP4's te mode against TE's kernel formulas, MXFP4/MXFP6; static: fixed
# scales and their saturated and underflowed counts).
foreach(area delayed current rowwise block mx mx_versions mx_bump properties stats threads nvfp4
             static)
  fp8lab_add_test(NAME sim_scaling_${area}_test SOURCES scaling_${area}_test.cpp
                  LIBS fp8lab::sim LABELS fast)
endforeach()
# The vectorized MX scale rule against the scalar one on every SIMD target (links Highway for
# the target loop of quantize_targets.hpp).
fp8lab_add_test(NAME sim_scaling_mx_codes_test SOURCES scaling_mx_codes_test.cpp
                LIBS fp8lab::sim hwy::hwy LABELS fast)
# Every positive fp32 scale through torchao's power-of-2 rule (about a minute on 2 cores).
fp8lab_add_test(NAME sim_scaling_pow2_exhaustive_test SOURCES scaling_pow2_exhaustive_test.cpp
                LIBS fp8lab::sim Threads::Threads LABELS exhaustive TIMEOUT 1800)
# The sub-byte element cast in lanes against the scalar model, and the MX/NVFP4 quantizers (RN
# and NVFP4's stochastic rounding) element by element, on every SIMD target.
fp8lab_add_test(NAME sim_scaling_subbyte_lanes_test SOURCES scaling_subbyte_lanes_test.cpp
                LIBS fp8lab::sim hwy::hwy LABELS fast)
