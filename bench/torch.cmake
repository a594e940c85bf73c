# Benchmarks that need LibTorch (included from bench/CMakeLists.txt when FP8LAB_WITH_TORCH).
# train_step_bench: an emulated FP8 training step over the FP32 LibTorch step of the same workload.
add_executable(train_step_bench ${CMAKE_CURRENT_SOURCE_DIR}/train_step_bench.cpp)
target_link_libraries(train_step_bench PRIVATE fp8lab_flags fp8lab_experiments fp8lab_bench_main)
# gpu_train_step_bench: training steps on the cuda backend over the CPU reference (sim backend);
# built with or without CUDA (without a device its rows are skipped, saying why).
add_executable(gpu_train_step_bench ${CMAKE_CURRENT_SOURCE_DIR}/gpu_train_step_bench.cpp)
target_link_libraries(gpu_train_step_bench PRIVATE fp8lab_flags fp8lab_experiments
                      fp8lab_bench_main)
# torch_peer_bench: the quantizers and GEMM models beside their peers in torch ops (torch's FP8
# cast, a torchao-style tensorwise and MX quantize, dequantize + at::mm), same process.
add_executable(torch_peer_bench ${CMAKE_CURRENT_SOURCE_DIR}/torch_peer_bench.cpp)
target_link_libraries(torch_peer_bench PRIVATE fp8lab_flags fp8lab::sim fp8lab_torch
                      fp8lab_bench_main)
# thread_scaling_bench: a whole training step at 2 sim threads over 1, steps interleaved (issue 21).
add_executable(thread_scaling_bench ${CMAKE_CURRENT_SOURCE_DIR}/thread_scaling_bench.cpp)
target_link_libraries(thread_scaling_bench PRIVATE fp8lab_flags fp8lab_experiments
                      fp8lab_bench_main)
