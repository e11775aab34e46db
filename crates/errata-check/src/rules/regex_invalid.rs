//! `regex-invalid` (error): an entry's `regex` does not compile.
//!
//! Regexes are compiled exactly as downstream tools compile them (`errata match` and the
//! consumer crate, through `errata-matcher`): Rust `regex` syntax (no look-around, no
//! back-references), under a 1 MiB program-size limit and a nesting limit of 64, and at
//! most 4096 bytes long, so that a hostile pattern cannot exhaust a consumer's memory. A
//! regex that matches the empty string (`x*`, `(a|)`) is refused too: it would match
//! every line of every log.

use errata_load::EntryDoc;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;
use crate::regexes::RegexStatus;

pub(super) fn entry(cx: &Ctx<'_>, doc: &EntryDoc, out: &mut Vec<Diagnostic>) {
    if let Some(RegexStatus::Invalid(why)) = regex_status(cx, doc) {
        let first_line = why.lines().last().unwrap_or(why).trim().to_string();
        out.push(
            diag("regex-invalid", &doc.path, Anchor::Value("/regex".into()), format!("regex does not compile: {first_line}"))
                .with_help("use Rust `regex` syntax (no look-around or back-references); escape literal `( ) [ ] . * + ?`"),
        );
    }
}

/// What the context recorded about an entry's regex, looked up by its position.
pub(super) fn regex_status<'c>(cx: &'c Ctx<'_>, doc: &EntryDoc) -> Option<&'c RegexStatus> {
    cx.regexes()
        .status
        .get(super::entry_index(cx, doc)?)?
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn lookaround_unbalanced_and_huge() {
        for bad in [
            r"(?<=CUDA) error",
            "illegal (memory",
            r"(a{1000}){1000}",
            r"(CUDA error)?",
        ] {
            let mut e = valid_entry("cuda/a");
            e["regex"] = bad.into();
            assert_eq!(entry_diags(&e, "regex-invalid").len(), 1, "{bad}");
        }
    }
}
