//! `regex-overlap` (warning): an entry's regex also matches another entry's signature.
//!
//! When two entries' regexes match the same message, a log scanner reports both and the
//! reader must guess. Make the regexes more specific (anchor them, include the
//! distinguishing words) or merge the entries. Uses a literal prefilter, so checking
//! 10,000 entries against each other stays fast.

use std::collections::BTreeMap;

use errata_model::{Anchor, Diagnostic};
use rayon::prelude::*;

use super::diag;
use crate::context::Ctx;
use crate::regex_index::{LiteralIndex, RegexStatus, compile};

pub(super) fn corpus(cx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    let entries = &cx.kb.entries;
    let valid =
        cx.regexes
            .iter()
            .enumerate()
            .filter_map(|(i, status)| match (status, &entries[i].entry) {
                (Some(RegexStatus::Valid { .. }), Some(e)) => Some((i, e.regex.as_str())),
                _ => None,
            });
    let index = LiteralIndex::new(valid);
    // regex owner → the other entries whose signature contains one of its literals.
    let mut candidates: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (j, doc) in entries.iter().enumerate() {
        let Some(target) = doc.entry.as_ref().filter(|e| !e.signature.is_empty()) else {
            continue;
        };
        for i in index.candidates(&target.signature) {
            let same = entries[i]
                .entry
                .as_ref()
                .is_some_and(|owner| owner.id == target.id);
            if i != j && !same {
                candidates.entry(i).or_default().push(j);
            }
        }
    }
    // Only regexes with candidates are compiled again, each once.
    let found: Vec<Diagnostic> = candidates
        .into_par_iter()
        .flat_map_iter(|(i, targets)| {
            let owner = entries[i].entry.as_ref();
            let regex = owner.and_then(|e| compile(&e.regex).ok());
            targets.into_iter().filter_map(move |j| {
                let target = entries[j].entry.as_ref()?;
                regex.as_ref()?.is_match(&target.signature).then(|| {
                    diag("regex-overlap", &entries[i].path, Anchor::Value("/regex".into()), format!("regex also matches the signature of `{}`", target.id))
                        .with_help("make the regex more specific (anchor it, add the distinguishing words), or merge the entries")
                })
            })
        })
        .collect();
    out.extend(found);
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn generic_regex_matches_specific_signature() {
        let mut generic = valid_entry("cuda/generic");
        generic["signature"] = "CUDA error: an illegal memory access was encountered".into();
        generic["regex"] = "illegal memory access was encountered".into();
        let mut specific = valid_entry("cuda/specific");
        specific["signature"] =
            "CUDA error: an illegal memory access was encountered after a cudaFree call".into();
        specific["regex"] = "illegal memory access was encountered after a cudaFree".into();
        let diags = only(
            check_files(&[
                (
                    "signatures/cuda/generic.json",
                    serde_json::to_string(&generic).unwrap(),
                ),
                (
                    "signatures/cuda/specific.json",
                    serde_json::to_string(&specific).unwrap(),
                ),
            ]),
            "regex-overlap",
        );
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert!(diags[0].file.ends_with("generic.json"));
        assert_eq!(diags[0].severity, errata_model::Severity::Warning);
    }
}
