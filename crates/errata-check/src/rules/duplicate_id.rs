//! `duplicate-id` (error): two entries declare the same `id`.
//!
//! Ids identify entries everywhere (links, site URLs, the bundle). Each duplicate after
//! the first (in path order) is reported, pointing at the first.

use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn corpus(cx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let mut ids: Vec<_> = cx.ids.iter().filter(|(_, docs)| docs.len() > 1).collect();
    ids.sort_by_key(|(id, _)| *id);
    for (id, docs) in ids {
        for doc in &docs[1..] {
            out.push(
                diag(
                    "duplicate-id",
                    &doc.path,
                    Anchor::Value("/id".into()),
                    format!("id `{id}` is also declared by {}", docs[0].path.display()),
                )
                .with_help("give each entry a unique id (equal to its file path)"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn second_declaration_is_reported() {
        let a = valid_entry("cuda/a");
        let diags = only(
            check_files(&[
                ("signatures/cuda/a.json", serde_json::to_string(&a).unwrap()),
                (
                    "signatures/other/a.json",
                    serde_json::to_string(&a).unwrap(),
                ),
            ]),
            "duplicate-id",
        );
        assert_eq!(diags.len(), 1);
        assert!(diags[0].file.ends_with("other/a.json"));
    }
}
