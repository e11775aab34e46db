// harness=cuda-cdp: like cuda-prelude (a whole program with its own `main`, after
// cuda-common.h's includes and CUDA_CHECK), compiled with relocatable device code and
// linked with cudadevrt, so kernels may launch kernels (CUDA Dynamic Parallelism).
{{FRAGMENT}}
