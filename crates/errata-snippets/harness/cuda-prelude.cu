// harness=cuda-prelude: the fragment is a whole program with its own `main`, after
// cuda-common.h's includes and CUDA_CHECK.
{{FRAGMENT}}
