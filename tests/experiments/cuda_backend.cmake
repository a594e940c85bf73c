# Tests of the cuda LinearBackend and the shadow check (experiments/linear/cuda_backend.hpp,
# shadow_check.hpp). Included from tests/experiments/CMakeLists.txt only with CUDA.
# - experiments_cuda_backend_shadow_test (label torch;fast): the shadow check against a faulty
#   sim backend; needs no GPU.
# - experiments_cuda_backend_plan_test (label torch;fast): the backend's quantizer plans, GEMM
#   layouts and models, dequantize and backward_override dequantized through gpu/'s host twins
#   against SimBackend; needs no GPU.
# - experiments_cuda_backend_equality_test (label gpu): cuda vs sim bit for bit; the shared gpu
#   main (tests/gpu/gpu_test_main.cpp) exits 77 without a device, which CTest shows as skipped.
fp8lab_add_test(NAME experiments_cuda_backend_shadow_test SOURCES cuda_backend_shadow_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
fp8lab_add_test(NAME experiments_cuda_backend_plan_test SOURCES cuda_backend_plan_test.cpp
                LIBS fp8lab_experiments LABELS "torch;fast" TIMEOUT 300)
fp8lab_add_test(NAME experiments_cuda_backend_equality_test SOURCES cuda_backend_equality_test.cpp
                MAIN fp8lab_gpu_test_main LIBS fp8lab_experiments LABELS gpu TIMEOUT 600)
