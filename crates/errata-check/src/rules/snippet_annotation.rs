//! `snippet-annotation` (error): a code fence's annotations are malformed or unknown.
//!
//! After the language, a fence may carry `expect=…` (`ok`, `compile-error[:regex]`,
//! `cuda:<cudaErrorName>`, `py:<Exception>[:regex]`, `sanitizer:<memcheck|racecheck|initcheck|leakcheck>`,
//! `exit:<n>`), `requires=gpu[,torch,multi-gpu,whole-gpu]`, `timeout=30s`, `harness=<name>`,
//! `cont`, and `ignore(reason)`. Anything else is an error, so that a typo such as
//! `expct=` never silently turns verification off. `cuda:` names are also checked against
//! the `cudaError_t` table. The same applies to an entry's `verify.annotations`.

use errata_load::ArticleDoc;

use super::EntryInput;
use errata_model::snippet::{Annotations, Expect, FenceInfo};
use errata_model::{Anchor, Diagnostic, cuda_errors};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "snippet-annotation";
const HELP: &str = "see `errata explain snippet-annotation` for the annotation grammar";

pub(super) fn article(_cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    for block in doc.code_blocks.iter().filter(|b| b.fenced) {
        let info = FenceInfo::parse(&block.info);
        for e in info.errors {
            let r = block.info_offset + e.span.start..block.info_offset + e.span.end;
            out.push(diag(RULE, &doc.path, Anchor::Bytes(r), e.message).with_help(HELP));
        }
        if let Some(message) = unknown_cuda_error(&info.annotations) {
            let r = block.info_offset..block.info_offset + block.info.len();
            out.push(diag(RULE, &doc.path, Anchor::Bytes(r), message).with_help(HELP));
        }
    }
}

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(verify) = doc.entry.as_ref().and_then(|e| e.verify.as_ref()) else {
        return;
    };
    let (annotations, errors) = Annotations::parse(&verify.annotations);
    let anchor = || Anchor::Value("/verify/annotations".into());
    for e in errors {
        out.push(diag(RULE, &doc.path, anchor(), e.message).with_help(HELP));
    }
    if let Some(message) = unknown_cuda_error(&annotations) {
        out.push(diag(RULE, &doc.path, anchor(), message).with_help(HELP));
    }
}

fn unknown_cuda_error(a: &Annotations) -> Option<String> {
    match &a.expect {
        Some(Expect::Cuda(name)) if cuda_errors::by_name(name).is_none() => {
            Some(format!("`{name}` is not a cudaError_t value"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn typos_and_fake_errors() {
        let body = "```cuda expct=ok\nint main() {}\n```\n\n```cuda expect=cuda:cudaErrorDriverNotReady\nint main() {}\n```\n\n```cuda expect=ok harness=cuda-main\nint x;\n```\n";
        let diags = only(
            check_files(&[("articles/cuda/b.md", valid_article("cuda/b", body))]),
            "snippet-annotation",
        );
        assert_eq!(diags.len(), 2, "{diags:#?}");
        let loc = diags[0].location.unwrap();
        assert_eq!((loc.line, loc.column), (6, 9));
    }

    #[test]
    fn entry_verify() {
        let mut e = valid_entry("cuda/a");
        e["verify"] = serde_json::json!({"lang": "cuda", "annotations": "expect=cuda:cudaErrorIllegalAddress requires=gpu", "code": "int main() {}"});
        assert!(entry_diags(&e, "snippet-annotation").is_empty());
        e["verify"]["annotations"] = "expect=segfault".into();
        assert_eq!(entry_diags(&e, "snippet-annotation").len(), 1);
    }
}
