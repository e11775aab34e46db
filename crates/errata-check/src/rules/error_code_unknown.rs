//! `error-code-unknown` (error): `error_code` is not a real CUDA status value.
//!
//! `error_code` is an enumerator name, optionally with its number: a `cudaError_t`
//! (`cudaErrorIllegalAddress (700)`), a driver API `CUresult` (`CUDA_ERROR_ILLEGAL_ADDRESS
//! (700)`), a `cublasStatus_t` (`CUBLAS_STATUS_EXECUTION_FAILED (13)`), a `cudnnStatus_t`
//! (`CUDNN_STATUS_BAD_PARAM (2000)`), an `ncclResult_t` (`ncclSystemError (2)`), a
//! `cufftResult` (`CUFFT_INTERNAL_ERROR (5)`), a `cusolverStatus_t`, a
//! `cusparseStatus_t`, a `curandStatus_t` or an `nvmlReturn_t`
//! (`NVML_ERROR_LIB_RM_VERSION_MISMATCH (18)`). Both the name and the number are
//! checked against tables generated from NVIDIA's own headers (`cargo xtask
//! gen-cuda-errors`, `gen-cu-results`, `gen-cublas-status`, `gen-cudnn-status`,
//! `gen-nccl-results`, `gen-cufft-results`, `gen-cusolver-status`,
//! `gen-cusparse-status`, `gen-curand-status`, `gen-nvml-returns`), never against
//! memory: for example, there is
//! no `cudaErrorDriverNotReady`, 804 is `cudaErrorCompatNotSupportedOnDevice`, and cuDNN
//! 9's `CUDNN_STATUS_BAD_PARAM` is 2000, not cuDNN 8's 3. When the name is unknown but
//! the number is real, the help names the enumerator with that number.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic, cuda_errors, status_codes};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "error-code-unknown";

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(code) = doc.entry.as_ref().and_then(|e| e.error_code.as_deref()) else {
        return;
    };
    if let Err((message, help)) = check_code(code) {
        out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::Value("/error_code".into()),
                message,
            )
            .with_help(help),
        );
    }
}

fn check_code(text: &str) -> Result<(), (String, String)> {
    let text = text.trim();
    let (name, number) = match text.split_once('(') {
        Some((name, rest)) => {
            let num = rest
                .strip_suffix(')')
                .map(str::trim)
                .and_then(|n| n.parse::<i64>().ok());
            let Some(num) = num else {
                return Err((
                    format!("`{text}` is not `Name` or `Name (N)`"),
                    "write e.g. `cudaErrorIllegalAddress (700)` or `CUBLAS_STATUS_EXECUTION_FAILED (13)`".into(),
                ));
            };
            (name.trim(), Some(num))
        }
        None => (text, None),
    };
    if name.starts_with("cudaError") || name == "cudaSuccess" {
        return check_cuda_error(name, number);
    }
    match (status_codes::lookup(name), number) {
        (Some((table, c)), Some(n)) if c.code != n => Err((
            format!("`{name}` is {}, not {n} ({})", c.code, table.type_name),
            match table.by_code(n).next() {
                Some(other) => format!("{n} is `{}`; write `{name} ({})`", other.name, c.code),
                None => format!("write `{name} ({})`", c.code),
            },
        )),
        (Some(_), _) => Ok(()),
        (None, number) => match status_codes::family(name) {
            Some(table) => Err((
                format!("`{name}` is not a {} value in {}", table.type_name, table.source),
                match number.and_then(|n| table.by_code(n).next()) {
                    Some(c) => format!("{} is `{}`", c.code, c.name),
                    None => format!("use a {} name from that header", table.type_name),
                },
            )),
            None => Err((
                format!("`{name}` is not a cudaError_t, CUresult, cublasStatus_t, cudnnStatus_t or ncclResult_t value"),
                "use an enumerator of one of those types, from NVIDIA's headers (`errata explain error-code-unknown`)".into(),
            )),
        },
    }
}

fn check_cuda_error(name: &str, number: Option<i64>) -> Result<(), (String, String)> {
    let number = number.map(|n| i32::try_from(n).unwrap_or(i32::MIN));
    match (cuda_errors::by_name(name), number) {
        (Some(e), Some(n)) if e.code != n => Err((
            format!("`{name}` is {}, not {n}", e.code),
            match cuda_errors::by_code(n) {
                Some(other) => format!("{n} is `{}`; write `{name} ({})`", other.name, e.code),
                None => format!("write `{name} ({})`", e.code),
            },
        )),
        (Some(_), _) => Ok(()),
        (None, number) => {
            let hint = match number.and_then(cuda_errors::by_code) {
                Some(e) => format!("{} is `{}` ({})", e.code, e.name, e.description),
                None => "use a `cudaError_t` name from CUDA's driver_types.h (`errata explain error-code-unknown`)".into(),
            };
            Err((
                format!(
                    "`{name}` is not a cudaError_t value in {}",
                    cuda_errors::CUDA_HEADER_SOURCE
                ),
                hint,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::check_code;

    #[test]
    fn names_and_numbers_from_the_header() {
        assert!(check_code("cudaErrorIllegalAddress").is_ok());
        assert!(check_code("cudaErrorIllegalAddress (700)").is_ok());
        assert!(check_code("cudaErrorIllegalAddress (701)").is_err());
        let (msg, help) = check_code("cudaErrorDriverNotReady (804)").unwrap_err();
        assert!(msg.contains("not a cudaError_t"), "{msg}");
        assert!(
            help.contains("cudaErrorCompatNotSupportedOnDevice"),
            "{help}"
        );
        assert!(check_code("cudaErrorCudartUnloading (4)").is_ok());
    }

    #[test]
    fn library_status_values_from_their_headers() {
        assert!(check_code("CUBLAS_STATUS_EXECUTION_FAILED (13)").is_ok());
        assert!(check_code("CUBLAS_STATUS_EXECUTION_FAILED").is_ok());
        let (msg, help) = check_code("CUBLAS_STATUS_EXECUTION_FAILED (14)").unwrap_err();
        assert!(msg.contains("is 13"), "{msg}");
        assert!(help.contains("CUBLAS_STATUS_INTERNAL_ERROR"), "{help}");
        // cuDNN 9 renumbered: BAD_PARAM is 2000 (cuDNN 8 said 3).
        assert!(check_code("CUDNN_STATUS_BAD_PARAM (2000)").is_ok());
        assert!(check_code("CUDNN_STATUS_BAD_PARAM (3)").is_err());
        assert!(check_code("CUDNN_STATUS_ARCH_MISMATCH (3007)").is_ok());
        assert!(check_code("ncclSystemError (2)").is_ok());
        assert!(check_code("ncclRemoteError (6)").is_ok());
        assert!(check_code("CUDA_ERROR_ILLEGAL_ADDRESS (700)").is_ok());
        let (msg, help) = check_code("CUBLAS_STATUS_EXECUTON_FAILED (13)").unwrap_err();
        assert!(msg.contains("cublasStatus_t"), "{msg}");
        assert!(help.contains("CUBLAS_STATUS_EXECUTION_FAILED"), "{help}");
        let (msg, _) = check_code("NCCL_SYSTEM_ERROR").unwrap_err();
        assert!(msg.contains("ncclResult_t"), "{msg}");
        assert!(check_code("CUBLAS_STATUS_EXECUTION_FAILED (x)").is_err());
    }

    #[test]
    fn reported_at_the_field() {
        let mut e = valid_entry("cuda/a");
        e["error_code"] = "cudaErrorDriverNotReady (804)".into();
        assert_eq!(
            entry_diags(&e, "error-code-unknown")[0].pointer(),
            Some("/error_code")
        );
    }
}
