// Prepended to every CUDA harness (cuda-main, cuda-prelude, cuda-kernel) by
// src/harness.rs: the includes and CUDA_CHECK, kept in this one file.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

// Prints the error's name (what errata classifies on) and exits 1.
#define CUDA_CHECK(expr)                                                        \
    do {                                                                        \
        cudaError_t err_ = (expr);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s (%d): %s at %s:%d\n",                \
                    cudaGetErrorName(err_), (int)err_, cudaGetErrorString(err_), \
                    __FILE__, __LINE__);                                        \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

