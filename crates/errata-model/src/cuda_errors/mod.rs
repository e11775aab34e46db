//! The real values of CUDA's `cudaError_t`, generated from `driver_types.h`.
//!
//! The table in `table.rs` is written by `cargo xtask gen-cuda-errors` from the header
//! shipped in NVIDIA's `nvidia-cuda-runtime` pip wheel (never typed by hand);
//! `cargo xtask gen-cuda-errors --check` fails when it is stale.

mod table;

pub use table::{CUDA_ERRORS, CUDA_HEADER_SOURCE};

/// One enumerator of `cudaError_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaError {
    /// The enumerator name, e.g. `cudaErrorIllegalAddress`.
    pub name: &'static str,
    /// Its numeric value, e.g. `700`.
    pub code: i32,
    /// The first sentence of the header's doc comment.
    pub description: &'static str,
}

/// Looks an error up by name.
pub fn by_name(name: &str) -> Option<&'static CudaError> {
    CUDA_ERRORS.iter().find(|e| e.name == name)
}

/// Looks an error up by number.
pub fn by_code(code: i32) -> Option<&'static CudaError> {
    CUDA_ERRORS.iter().find(|e| e.code == code)
}
