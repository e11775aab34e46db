//! The status codes of the CUDA libraries besides the runtime, generated from NVIDIA's
//! own headers: cuBLAS's `cublasStatus_t`, cuDNN's `cudnnStatus_t`, NCCL's
//! `ncclResult_t`, the driver API's `CUresult`, cuFFT's `cufftResult`, cuSOLVER's
//! `cusolverStatus_t`, cuSPARSE's `cusparseStatus_t`, cuRAND's `curandStatus_t` and
//! NVML's `nvmlReturn_t`.
//!
//! Each table is written by its `cargo xtask gen-*` command from a header in a pinned pip
//! wheel (never typed by hand) and checked on CI with `--check`. `cudaError_t` has its
//! own module ([`crate::cuda_errors`]) because it also carries the runtime's strings.

mod cu_result;
mod cublas;
mod cudnn;
mod cufft;
mod curand;
mod cusolver;
mod cusparse;
mod nccl;
mod nvml;

/// One value of a status enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusCode {
    /// The enumerator, e.g. `CUBLAS_STATUS_EXECUTION_FAILED`.
    pub name: &'static str,
    /// Its value, e.g. `13`.
    pub code: i64,
    /// The first sentence of the header's doc comment, if it has one.
    pub description: &'static str,
}

/// One status enum, as generated from its header.
#[derive(Debug)]
pub struct StatusTable {
    /// The C type, e.g. `cublasStatus_t`.
    pub type_name: &'static str,
    /// The wheel and header it was generated from.
    pub source: &'static str,
    /// Every value, in header order (deprecated aliases included, sharing numbers).
    pub codes: &'static [StatusCode],
}

impl StatusTable {
    /// The value named `name`.
    pub fn by_name(&self, name: &str) -> Option<&'static StatusCode> {
        self.codes.iter().find(|c| c.name == name)
    }

    /// The values numbered `code` (a deprecated alias shares its number).
    pub fn by_code(&self, code: i64) -> impl Iterator<Item = &'static StatusCode> {
        self.codes.iter().filter(move |c| c.code == code)
    }
}

/// Every table: cuBLAS, cuDNN, NCCL, the driver API, then cuFFT, cuSOLVER, cuSPARSE,
/// cuRAND and NVML.
pub static TABLES: [&StatusTable; 9] = [
    &cublas::TABLE,
    &cudnn::TABLE,
    &nccl::TABLE,
    &cu_result::TABLE,
    &cufft::TABLE,
    &cusolver::TABLE,
    &cusparse::TABLE,
    &curand::TABLE,
    &nvml::TABLE,
];

/// The table and value that `name` is, in any of [`TABLES`].
pub fn lookup(name: &str) -> Option<(&'static StatusTable, &'static StatusCode)> {
    TABLES.iter().find_map(|t| t.by_name(name).map(|c| (*t, c)))
}

/// The family (its C type) and number of an `error_code` value, `Name` or `Name (N)`: a
/// `cudaError_t` enumerator or one of any of [`TABLES`]. What `errata decode` and the
/// matcher's bare-number lines link an entry by.
pub fn value_of(error_code: &str) -> Option<(&'static str, i64)> {
    let name = error_code.split('(').next().unwrap_or(error_code).trim();
    if let Some(e) = crate::cuda_errors::by_name(name) {
        return Some(("cudaError_t", i64::from(e.code)));
    }
    lookup(name).map(|(table, code)| (table.type_name, code.code))
}

/// The table whose enumerators `name` looks like (by prefix), whether or not it is one:
/// the help of `error-code-unknown` for a misspelt `CUBLAS_STATUS_EXECUTON_FAILED`.
pub fn family(name: &str) -> Option<&'static StatusTable> {
    let prefix = |p: &str| name.starts_with(p);
    if prefix("CUBLAS_STATUS_") {
        Some(&cublas::TABLE)
    } else if prefix("CUDNN_STATUS_") {
        Some(&cudnn::TABLE)
    } else if prefix("nccl") {
        Some(&nccl::TABLE)
    } else if prefix("CUDA_ERROR_") || name == "CUDA_SUCCESS" {
        Some(&cu_result::TABLE)
    } else if prefix("CUFFT_") {
        Some(&cufft::TABLE)
    } else if prefix("CUSOLVER_STATUS_") {
        Some(&cusolver::TABLE)
    } else if prefix("CUSPARSE_STATUS_") {
        Some(&cusparse::TABLE)
    } else if prefix("CURAND_STATUS_") {
        Some(&curand::TABLE)
    } else if prefix("NVML_") {
        Some(&nvml::TABLE)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    //! Facts read from the pinned headers (see each table's `source`). If a newer header
    //! changes one, the table was regenerated: check the header, update the fact here.
    use super::*;

    #[test]
    fn values_from_the_headers() {
        let get = |n: &str| lookup(n).map(|(t, c)| (t.type_name, c.code));
        assert_eq!(
            get("CUBLAS_STATUS_EXECUTION_FAILED"),
            Some(("cublasStatus_t", 13))
        );
        assert_eq!(
            get("CUBLAS_STATUS_LICENSE_ERROR"),
            Some(("cublasStatus_t", 16))
        );
        assert_eq!(get("CUDNN_STATUS_BAD_PARAM"), Some(("cudnnStatus_t", 2000)));
        // A deprecated cuDNN 9 name is an alias of a sub-code.
        assert_eq!(
            get("CUDNN_STATUS_ARCH_MISMATCH"),
            Some(("cudnnStatus_t", 3007))
        );
        assert_eq!(get("ncclRemoteError"), Some(("ncclResult_t", 6)));
        assert_eq!(get("CUDA_ERROR_ILLEGAL_ADDRESS"), Some(("CUresult", 700)));
        assert_eq!(get("cudaErrorIllegalAddress"), None);
        assert_eq!(get("CUFFT_INTERNAL_ERROR"), Some(("cufftResult", 5)));
        assert_eq!(get("CUFFT_INVALID_DEVICE"), Some(("cufftResult", 11)));
        assert_eq!(
            get("CUSOLVER_STATUS_EXECUTION_FAILED"),
            Some(("cusolverStatus_t", 6))
        );
        assert_eq!(
            get("CUSPARSE_STATUS_INSUFFICIENT_RESOURCES"),
            Some(("cusparseStatus_t", 11))
        );
        assert_eq!(
            get("CURAND_STATUS_LAUNCH_FAILURE"),
            Some(("curandStatus_t", 201))
        );
        assert_eq!(get("NVML_ERROR_GPU_IS_LOST"), Some(("nvmlReturn_t", 15)));
        assert_eq!(
            nvml::TABLE
                .by_name("NVML_ERROR_DRIVER_NOT_LOADED")
                .map(|c| c.description),
            Some("NVIDIA driver is not loaded")
        );
        for t in TABLES {
            assert!(
                t.codes.len() >= 9,
                "{} has {} values",
                t.type_name,
                t.codes.len()
            );
            assert!(t.source.contains(".h"), "{}", t.source);
            assert_eq!(
                family(t.codes[1].name).map(|f| f.type_name),
                Some(t.type_name)
            );
        }
        assert_eq!(
            cudnn::TABLE
                .by_code(3007)
                .map(|c| c.name)
                .collect::<Vec<_>>(),
            [
                "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
                "CUDNN_STATUS_ARCH_MISMATCH"
            ]
        );
    }
}
