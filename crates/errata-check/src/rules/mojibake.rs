//! `mojibake` (error): text that was decoded with the wrong encoding.
//!
//! UTF-8 text that went through Windows-1252 or Latin-1 turns `it’s` into `itâ€™s` and
//! `é` into `Ã©`; a replacement character `�` marks bytes that were lost. Every string in
//! an entry and the whole text of an article are scanned; the first occurrence per field
//! is reported. Re-type the affected characters.

use errata_load::ArticleDoc;

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::{diag, visit_strings};
use crate::context::Ctx;
use crate::text::find_mojibake;

const RULE: &str = "mojibake";
const HELP: &str = "re-type the garbled characters (e.g. `â€™` was `’`, `Ã©` was `é`)";

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    visit_strings(&doc.value, &mut String::new(), &mut |pointer, text| {
        if let Some(r) = find_mojibake(text) {
            out.push(
                diag(
                    RULE,
                    &doc.path,
                    Anchor::Value(pointer.to_string()),
                    format!("garbled text `{}`", &text[r]),
                )
                .with_help(HELP),
            );
        }
    });
}

pub(super) fn article(cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    let Some(src) = cx.kb.source(&doc.path) else {
        return;
    };
    let mut offset = 0;
    while let Some(r) = find_mojibake(&src.text[offset..]) {
        let range = offset + r.start..offset + r.end;
        out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::Bytes(range.clone()),
                format!("garbled text `{}`", &src.text[range.clone()]),
            )
            .with_help(HELP),
        );
        // Continue after the end of this line: one report per line is enough.
        offset = src.text[range.end..]
            .find('\n')
            .map_or(src.text.len(), |n| range.end + n + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn entries_and_articles() {
        let mut e = valid_entry("cuda/a");
        e["root_cause"] = "The kernel itâ€™s running".into();
        let diags = only(
            check_files(&[
                ("signatures/cuda/a.json", serde_json::to_string(&e).unwrap()),
                (
                    "articles/cuda/b.md",
                    valid_article("cuda/b", "Fine line.\nWhile correct, itâ€™s slow.\n"),
                ),
            ]),
            "mojibake",
        );
        assert_eq!(diags.len(), 2, "{diags:#?}");
        let loc = diags[0].location.unwrap();
        assert_eq!((loc.line, loc.column), (7, 18));
        assert_eq!(diags[1].pointer(), Some("/root_cause"));
    }
}
