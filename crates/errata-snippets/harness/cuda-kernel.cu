// harness=cuda-kernel: kernels and functions after cuda-common.h; no `main`, compiled
// with `-c` (never run).
{{FRAGMENT}}
