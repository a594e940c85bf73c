# Compiler flags every fp8lab target gets through the fp8lab_flags interface target.
#
# Strict floating point is part of the numerics contract (docs/numerics.md: every fp32 operation is one
# correctly rounded IEEE operation): no -ffast-math anywhere, and no FMA contraction, which GCC
# would otherwise do (-ffp-contract=fast is its default outside ISO C) inside Highway's
# AVX2/AVX-512 code paths where FMA instructions are available.
add_library(fp8lab_flags INTERFACE)
target_compile_options(fp8lab_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                            -ffp-contract=off -fno-fast-math>
  # nvcc: no fused multiply-add unless a kernel writes __fmaf_rn itself; IEEE division and sqrt.
  $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -prec-div=true -prec-sqrt=true -ftz=false
                             -Xcompiler=-ffp-contract=off>)
if(FP8LAB_WERROR)
  target_compile_options(fp8lab_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror> $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
endif()
if(FP8LAB_SANITIZE)
  target_compile_options(fp8lab_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=all
                              -fno-omit-frame-pointer>)
  target_link_options(fp8lab_flags INTERFACE -fsanitize=address,undefined)
endif()
