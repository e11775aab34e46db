//! The `cudaError_t` table. Replaced by `cargo xtask gen-cuda-errors`.
