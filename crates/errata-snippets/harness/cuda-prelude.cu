// harness=cuda-prelude: includes and CUDA_CHECK; the fragment has its own `main`.
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

{{FRAGMENT}}
