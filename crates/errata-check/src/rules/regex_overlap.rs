//! `regex-overlap` (warning): an entry's regex also matches another entry's signature.
//!
//! When two entries' regexes match the same message, a log scanner reports both and the
//! reader must guess. Make the regexes more specific (anchor them, include the
//! distinguishing words) or merge the entries. Regexes are matched as a log scanner
//! matches them (`errata match`, the consumer crate): one line at a time, with the same
//! literal prefilter, so checking 10,000 entries against each other stays fast.
//!
//! Some overlaps are the truth: compute-sanitizer's `Program hit cudaErrorInvalidValue
//! (error 1) …` line names a runtime error, so the entry for that error matches it too,
//! and a reader is served by both (the more specific entry ranks first). Such an overlap
//! is declared by linking the two entries in `transition_graph` (either direction, any
//! edge): linked entries are not reported. An overlap between unrelated entries is.

use errata_model::{Anchor, Diagnostic};
use rayon::prelude::*;

use super::diag;
use crate::context::Ctx;

pub(super) fn corpus(cx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let entries = &cx.kb.entries;
    let found: Vec<Diagnostic> = entries
        .par_iter()
        .enumerate()
        .flat_map_iter(|(j, doc)| {
            let target = doc.entry.as_ref().filter(|e| !e.signature.is_empty());
            let owners = target.map_or_else(Vec::new, |t| cx.regexes().matching(&t.signature));
            owners.into_iter().filter_map(move |i| {
                let target = target?;
                let owner = entries[i].entry.as_ref()?;
                // A declared relation explains the overlap (see the module docs).
                let linked = |a: &errata_model::Entry, b: &str| a.edges().any(|(_, _, t)| t == b);
                let declared = linked(owner, &target.id) || linked(target, &owner.id);
                (i != j && owner.id != target.id && !declared).then(|| {
                    diag("regex-overlap", &entries[i].path, Anchor::Value("/regex".into()), format!("regex also matches the signature of `{}`", target.id))
                        .with_help("make the regex more specific (anchor it, add the distinguishing words), merge the entries, or, when both rightly match, link them in transition_graph")
                })
            })
        })
        .collect();
    out.extend(found);
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    /// The `regex-overlap` diagnostics of a corpus of the two entries.
    fn overlaps(
        generic: &serde_json::Value,
        specific: &serde_json::Value,
    ) -> Vec<errata_model::Diagnostic> {
        only(
            check_files(&[
                (
                    "signatures/cuda/generic.json",
                    serde_json::to_string(generic).unwrap(),
                ),
                (
                    "signatures/cuda/specific.json",
                    serde_json::to_string(specific).unwrap(),
                ),
            ]),
            "regex-overlap",
        )
    }

    #[test]
    fn generic_regex_matches_specific_signature() {
        let mut generic = valid_entry("cuda/generic");
        generic["signature"] = "CUDA error: an illegal memory access was encountered".into();
        generic["regex"] = "illegal memory access was encountered".into();
        let mut specific = valid_entry("cuda/specific");
        specific["signature"] =
            "CUDA error: an illegal memory access was encountered after a cudaFree call".into();
        specific["regex"] = "illegal memory access was encountered after a cudaFree".into();
        let diags = overlaps(&generic, &specific);
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert!(diags[0].file.ends_with("generic.json"));
        assert_eq!(diags[0].severity, errata_model::Severity::Warning);

        // Linked in either entry's transition graph: the overlap is declared.
        let mut linked = specific.clone();
        linked["transition_graph"]["preceded_by"] = serde_json::json!(["cuda/generic"]);
        let diags = overlaps(&generic, &linked);
        assert!(diags.is_empty(), "{diags:#?}");
        let mut linking = generic.clone();
        linking["transition_graph"]["leads_to"] = serde_json::json!(["cuda/specific"]);
        let diags = overlaps(&linking, &specific);
        assert!(diags.is_empty(), "{diags:#?}");
    }
}
