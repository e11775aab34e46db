//! `regex-no-match` (error): an entry's `regex` does not match its own `signature`.
//!
//! The regex is what log scanners use to recognise the error; if it does not even match
//! the canonical message, it will not match real logs.

use errata_load::EntryDoc;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use super::regex_invalid::regex_status;
use crate::context::Ctx;
use crate::regexes::RegexStatus;

pub(super) fn entry(cx: &Ctx<'_>, doc: &EntryDoc, out: &mut Vec<Diagnostic>) {
    let (
        Some(e),
        Some(RegexStatus::Valid {
            matches_signature: false,
        }),
    ) = (&doc.entry, regex_status(cx, doc))
    else {
        return;
    };
    if !e.signature.is_empty() {
        out.push(
            diag("regex-no-match", &doc.path, Anchor::Value("/regex".into()), "regex does not match the entry's own signature")
                .with_help("test the regex against `signature`; escape regex metacharacters such as `(` `.` `[`"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn unescaped_metacharacters() {
        let mut e = valid_entry("cuda/a");
        e["signature"] = "CUDA error: out of memory (cudaErrorMemoryAllocation)".into();
        // Unescaped parentheses are a group: the literal `(` in the signature is not matched.
        e["regex"] = "out of memory (cudaErrorMemoryAllocation)$".into();
        assert_eq!(entry_diags(&e, "regex-no-match").len(), 1);
        e["regex"] = "out of memory \\(cudaErrorMemoryAllocation\\)$".into();
        assert_eq!(entry_diags(&e, "regex-no-match").len(), 0);
    }
}
