# Benchmarks that need LibTorch (included from bench/CMakeLists.txt when FP8LAB_WITH_TORCH).
# train_step_bench: an emulated FP8 training step over the FP32 LibTorch step of the same workload.
add_executable(train_step_bench ${CMAKE_CURRENT_SOURCE_DIR}/train_step_bench.cpp)
target_link_libraries(train_step_bench PRIVATE fp8lab_flags fp8lab_experiments benchmark::benchmark)
# gpu_train_step_bench: training steps on the cuda backend over the CPU reference (sim backend);
# built with or without CUDA (without a device its rows are skipped, saying why).
add_executable(gpu_train_step_bench ${CMAKE_CURRENT_SOURCE_DIR}/gpu_train_step_bench.cpp)
target_link_libraries(gpu_train_step_bench PRIVATE fp8lab_flags fp8lab_experiments
                      benchmark::benchmark)
