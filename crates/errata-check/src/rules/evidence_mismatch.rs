//! `evidence-mismatch` (warning): `evidence_count` disagrees with the sources cited.
//!
//! `evidence_count` is the number of independent sources behind the entry. It should
//! equal the number of distinct URLs in the dead ends' and workarounds' `sources`: a
//! positive count with no source cited cannot be verified by a reader, and more cited
//! sources than the count means the count is stale.

use std::collections::BTreeSet;

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    if doc.value.get("evidence_count").is_none() {
        return;
    }
    let cited: BTreeSet<&str> = e
        .dead_ends
        .iter()
        .flat_map(|d| &d.sources)
        .chain(e.workarounds.iter().flat_map(|w| &w.sources))
        .map(|s| s.trim_end_matches('/'))
        .collect();
    let n = cited.len() as u64;
    if e.evidence_count != n {
        out.push(
            diag("evidence-mismatch", &doc.path, Anchor::Value("/evidence_count".into()), format!("evidence_count is {} but {n} distinct source(s) are cited", e.evidence_count))
                .with_help("cite each piece of evidence in `sources`, and set `evidence_count` to the number of distinct sources"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn count_without_sources() {
        let mut e = valid_entry("cuda/a");
        assert!(entry_diags(&e, "evidence-mismatch").is_empty());
        e["evidence_count"] = 1.into();
        e["dead_ends"][0]["sources"] = serde_json::json!([]);
        e["workarounds"][0]["sources"] = serde_json::json!([]);
        assert_eq!(entry_diags(&e, "evidence-mismatch").len(), 1);
    }
}
