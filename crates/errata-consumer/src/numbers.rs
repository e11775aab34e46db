//! Bare-number lines: `CUBLAS error 13`, `cuFFT error: 5`, `cudaMalloc failed with error
//! 2`, `CUDA driver error 700`. The line names its family with its own words (the
//! library, an API function of that library), and the number is read in that family's
//! table only (NVIDIA's, generated from the headers in `errata_model`): 13 is
//! `CUBLAS_STATUS_EXECUTION_FAILED` after "cublas" and `cudaErrorInvalidSymbol` after
//! "cuda", and a bare "error 13" with no family named is answered by nothing.
//!
//! Each entry whose `error_code` is a value of a family gets one extra pattern here,
//! compiled with the entries' own: the line must name the family, then a failure word,
//! then the number.

use errata_model::{cuda_errors, status_codes};

use crate::Entry;

/// What names a family at the start of a bare-number phrase, by the family's C type.
/// Library words are matched without regard to case; an API function name keeps its
/// case (`cudaMalloc` is the runtime, `cuMemAlloc` the driver API).
fn family_lead(type_name: &str) -> Option<&'static str> {
    Some(match type_name {
        "cudaError_t" => r"(?:\bcuda(?:[ _]runtime)?|\b(?-i:cuda[A-Z]\w*))",
        "CUresult" => r"(?:\bcuda[ _]driver(?:[ _]api)?|\b(?-i:CUresult|cu[A-Z][a-z]\w*))",
        "cublasStatus_t" => r"\bcublas\w*",
        "cudnnStatus_t" => r"\bcudnn\w*",
        "ncclResult_t" => r"\bnccl\w*",
        "cufftResult" => r"\bcufft\w*",
        "cusolverStatus_t" => r"\bcusolver\w*",
        "cusparseStatus_t" => r"\bcusparse\w*",
        "curandStatus_t" => r"\bcurand\w*",
        "nvmlReturn_t" => r"\bnvml\w*",
        _ => return None,
    })
}

/// After the family: a failure word, connecting words, then the number (decimal or hex)
/// standing alone: `error 13`, `error: 13`, `failed with error code 13`, `returned 13`,
/// `status (13)`, `ERROR (code=700)`.
const FAILURE_THEN_NUMBER: &str = r"[ _]?\s*(?:error|err|status|failure|failed|returned|result)\b(?:\s+(?:with|error|status))*\s*[:=#(]?\s*(?:code\b\s*[:=#(]?\s*)?";

/// The family's success value (`CUBLAS_STATUS_SUCCESS`): glog's `CHECK_EQ(status,
/// CUBLAS_STATUS_SUCCESS)` prints `Check failed: status == CUBLAS_STATUS_SUCCESS (13 vs.
/// 0)`, the number beside the success name.
fn success_name(type_name: &str) -> Option<&'static str> {
    if type_name == "cudaError_t" {
        return Some("cudaSuccess");
    }
    status_codes::TABLES
        .iter()
        .find(|t| t.type_name == type_name)
        .and_then(|t| t.by_code(0).next())
        .map(|c| c.name)
}

/// One bare-number pattern: the entry it answers with and the value it decodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NumberPattern {
    /// Index of the entry in the index's entries.
    pub entry: usize,
    /// The value: its family's type name and number.
    pub family: &'static str,
    pub number: i64,
    /// The regex (Rust `regex` syntax, ASCII case-insensitive).
    pub regex: String,
    /// The same regex for any number of the family: the matcher runs it once per line
    /// before this pattern's (a line naming the library and a failure word sets off
    /// every number pattern of the family, 70 of them for `cudaError_t`).
    pub gate: String,
}

/// The family and number of an `error_code` (`Name` or `Name (N)`), by NVIDIA's tables.
/// A `cudaError_t` value renumbered by CUDA 10.1 is not one: an old log's bare "CUDA
/// error 4" was a launch failure ([`cuda_errors::same_in_every_release`]).
fn value_of(error_code: &str) -> Option<(&'static str, i64)> {
    let (family, number) = status_codes::value_of(error_code)?;
    let renumbered = family == "cudaError_t"
        && i32::try_from(number).is_ok_and(|n| !cuda_errors::same_in_every_release(n));
    (!renumbered).then_some((family, number))
}

/// The bare-number patterns of `entries`: for each entry whose `error_code` is a family
/// value other than success, the phrase (`CUBLAS error 13`) and glog's check
/// (`status == CUBLAS_STATUS_SUCCESS (13 vs. 0)`). When two entries claim one value, the first by id answers.
pub(crate) fn patterns(entries: &[Entry]) -> Vec<NumberPattern> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|a, b| entries[*a].id.cmp(&entries[*b].id));
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for i in order {
        let Some((family, number)) = entries[i].error_code.as_deref().and_then(value_of) else {
            continue;
        };
        let Some(lead) = family_lead(family) else {
            continue;
        };
        if number == 0 || !seen.insert((family, number)) {
            continue;
        }
        let value = if number < 0 {
            format!(r"-{}\b", -number)
        } else {
            format!(r"(?:{number}|0x0*{number:x})\b")
        };
        // Each form is written once, for this number and, as the gate, for any.
        let phrase = |value: &str| format!("(?i)(?:{lead}{FAILURE_THEN_NUMBER}{value})");
        out.push(NumberPattern {
            entry: i,
            family,
            number,
            regex: phrase(&value),
            gate: phrase(r"(?:-?\d+|0x[0-9a-f]+)\b"),
        });
        // glog's form is a pattern of its own: as one alternation with the phrase above,
        // the two branches share no required word, so the prefilter could not confirm
        // anything beyond the library's name and the regex ran on every line naming
        // it (every `NCCL INFO` line: half the matching time on a real log, measured).
        if let Some(ok) = success_name(family) {
            let glog = |value: &str| format!(r"\b(?-i:{ok})\s*\(\s*{value}\s+vs\.?\s+0\s*\)");
            out.push(NumberPattern {
                entry: i,
                family,
                number,
                regex: glog(&number.to_string()),
                gate: glog(r"\d+"),
            });
        }
    }
    out.sort_by_key(|p| p.entry);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, code: &str) -> Entry {
        Entry::from_value(serde_json::json!({
            "id": id, "signature": id, "regex": "x", "error_code": code
        }))
        .expect("entry")
    }

    fn matches(p: &[&NumberPattern], line: &str) -> bool {
        p.iter()
            .any(|p| regex::Regex::new(&p.regex).expect("regex").is_match(line))
    }

    #[test]
    fn the_line_names_the_family_and_the_table_gives_the_value() {
        let entries = [
            entry(
                "cublas/execution-failed",
                "CUBLAS_STATUS_EXECUTION_FAILED (13)",
            ),
            entry("cuda/invalid-symbol", "cudaErrorInvalidSymbol (13)"),
            entry(
                "cuda/illegal-memory-access",
                "cudaErrorIllegalAddress (700)",
            ),
            entry("cuda/success", "cudaSuccess (0)"),
            // 4 meant a launch failure before CUDA 10.1: a bare 4 is not read.
            entry(
                "cuda/cuda-error-driver-unloading",
                "cudaErrorCudartUnloading (4)",
            ),
        ];
        let p = patterns(&entries);
        let mut fams: Vec<(&str, i64)> = p.iter().map(|p| (p.family, p.number)).collect();
        fams.dedup();
        assert_eq!(
            fams,
            [
                ("cublasStatus_t", 13),
                ("cudaError_t", 13),
                ("cudaError_t", 700)
            ]
        );
        let of = |family: &str, number: i64| -> Vec<&NumberPattern> {
            p.iter()
                .filter(|x| x.family == family && x.number == number)
                .collect()
        };
        let (cublas, cuda13, cuda700) = (
            of("cublasStatus_t", 13),
            of("cudaError_t", 13),
            of("cudaError_t", 700),
        );
        for line in [
            "CUBLAS error 13 at gemm.cu:88",
            "cuBLAS status: 13",
            "cublasSgemm failed with error code 13",
            "cublasLtMatmul returned 13",
            "cublas error 0xd",
            // rbgirshick/py-faster-rcnn#912 (Caffe's CHECK_EQ), marian-nmt/marian#383,
            // PaddlePaddle/Paddle#47749.
            "F0827 19:55:39.568928 17377 math_functions.cu:26] Check failed: status == CUBLAS_STATUS_SUCCESS (13 vs. 0)",
            "Error: Cublas Error: 13 - /home/moses/marian/src/tensors/gpu/prod.cpp:118: cublasGemmEx(handle, transa, transb, m, n, k)",
            "OSError: (External) CUBLAS error(13).",
        ] {
            assert!(matches(&cublas, line), "{line}");
            assert!(!matches(&cuda13, line), "{line}");
        }
        for line in [
            "CUDA error 700 at kernel.cu:42",
            "cuda runtime error (700) : an illegal memory access",
            "cudaMemcpy failed: 700",
            "cudaDeviceSynchronize returned error code 700",
            // hypre-space/hypre#1456; its `(code=1)` is renumbered and stays unread.
            "An error \"CUDA ERROR (code=700)\" is reported when unified memory allocation is used.",
        ] {
            assert!(matches(&cuda700, line), "{line}");
        }
        for line in [
            "error 13",
            "CUDA error 7000",
            "CUDA error 4 at kernel.cu:12",
            "CUDA driver error 700",
            "cublas error at line 13",
            "cuDNN error 13",
            "processed 13 batches, cuda error count 0",
        ] {
            assert!(!p.iter().any(|x| matches(&[x], line)), "{line}");
        }
    }
}
