//! `error-string-mismatch` (error): the regex does not recognise the CUDA error its `error_code` names.
//!
//! An entry whose `error_code` is a `cudaError_t` enumerator says "this is what the
//! runtime reports as that code". Its `regex` must then recognise what the runtime
//! prints for it: either the `cudaGetErrorString` text of that code (as libcudart 13.5
//! prints it, from errata-model's `data/cuda-error-strings.tsv`) or the enumerator name
//! (`cudaGetErrorName`, which check macros, CuPy, XLA and PyTorch's "Search for" line
//! print). A regex that matches neither was written for some other message: a typo
//! ("illegal memory acess"), an invented wording, or a copy of another entry's regex.
//!
//! For codes whose runtime text is generic (`unknown error`, `invalid argument`,
//! `file not found`), matching only the enumerator name and CUDA-specific faces
//! (`CUDA error: unknown error`) is the better choice: the bare text occurs in unrelated
//! logs. The rule accepts either.
//!
//! Fix: add the runtime's text (escaped) or `|cudaErrorX` to the regex, or correct the
//! `error_code` if the entry is about another error.

use errata_model::{Anchor, Diagnostic, cuda_errors};

use super::{diag, entry_index};
use crate::context::Ctx;
use errata_load::EntryDoc;

const RULE: &str = "error-string-mismatch";

pub(super) fn entry(cx: &Ctx<'_>, doc: &EntryDoc, out: &mut Vec<Diagnostic>) {
    let Some(code) = doc.entry.as_ref().and_then(|e| e.error_code.as_deref()) else {
        return;
    };
    // `cudaErrorX` or `cudaErrorX (N)`; anything else is `error-code-unknown`'s to report.
    let name = code.split('(').next().unwrap_or(code).trim();
    let Some(text) = cuda_errors::runtime_string(name) else {
        return;
    };
    let Some(i) = entry_index(cx, doc) else {
        return;
    };
    // `None`: no regex, or one that does not compile (`regex-invalid` says so).
    let matches = |s: &str| cx.regexes().entry_matches(i, s);
    if matches(text) == Some(false) && matches(name) == Some(false) {
        out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::Value("/regex".into()),
                format!("regex matches neither the runtime's text for `{name}` (\"{text}\") nor the name `{name}`"),
            )
            .with_help(format!(
                "add `|{name}` or the escaped text to the regex, or correct `error_code` if the entry is about another error"
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    fn diags(code: &str, regex: &str, signature: &str) -> usize {
        let mut e = valid_entry("cuda/a");
        e["error_code"] = code.into();
        e["regex"] = regex.into();
        e["signature"] = signature.into();
        entry_diags(&e, "error-string-mismatch").len()
    }

    #[test]
    fn the_runtime_text_or_the_name_is_enough() {
        let code = "cudaErrorMisalignedAddress (716)";
        assert_eq!(
            diags(code, "misaligned address", "CUDA error: misaligned address"),
            0
        );
        assert_eq!(
            diags(
                code,
                "CUDA error: misaligned|cudaErrorMisalignedAddress",
                "CUDA error: misaligned"
            ),
            0
        );
        // Without the number too.
        assert_eq!(
            diags(
                "cudaErrorMisalignedAddress",
                "misaligned address",
                "misaligned address"
            ),
            0
        );
    }

    #[test]
    fn a_regex_written_for_another_message_is_reported_at_the_regex() {
        // A typo in the runtime's text, and no enumerator name.
        let mut e = valid_entry("cuda/a");
        e["error_code"] = "cudaErrorIllegalAddress (700)".into();
        e["signature"] = "CUDA error: an illegal memory acess was encountered".into();
        e["regex"] = "illegal memory acess".into();
        let found = entry_diags(&e, "error-string-mismatch");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].pointer(), Some("/regex"));
        assert!(
            found[0]
                .message
                .contains("an illegal memory access was encountered")
        );
        // Another code's regex copied over.
        assert_eq!(
            diags(
                "cudaErrorLaunchFailure (719)",
                "misaligned address",
                "misaligned address"
            ),
            1
        );
    }

    #[test]
    fn only_real_cuda_error_codes_are_checked() {
        // No error_code, an unknown one (error-code-unknown's), or a broken regex
        // (regex-invalid's): nothing to say here.
        let mut e = valid_entry("cuda/a");
        e["error_code"] = serde_json::Value::Null;
        assert_eq!(entry_diags(&e, "error-string-mismatch").len(), 0);
        assert_eq!(
            diags("cudaErrorDriverNotReady", "x happened", "x happened"),
            0
        );
        assert_eq!(diags("cudaErrorLaunchFailure", "(unclosed", "(unclosed"), 0);
    }
}
