//! `asymmetric-edge` (warning): a transition-graph edge has no edge back.
//!
//! If A `leads_to` B, B should list A in `preceded_by` (and the reverse); if A is
//! `frequently_confused_with` B, B should say so too. Otherwise a reader who lands on B
//! never learns about A.

use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn corpus(cx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for doc in &cx.kb.entries {
        let Some(e) = &doc.entry else { continue };
        for (field, i, target_id) in e.edges() {
            let Some(target) = cx
                .ids
                .get(target_id)
                .and_then(|docs| docs[0].entry.as_ref())
            else {
                continue;
            };
            let g = &target.transition_graph;
            let (back, back_field) = match field {
                "leads_to" => (&g.preceded_by, "preceded_by"),
                "preceded_by" => (&g.leads_to, "leads_to"),
                _ => (&g.frequently_confused_with, "frequently_confused_with"),
            };
            if !back.iter().any(|id| id == &e.id) {
                out.push(
                    diag(
                        "asymmetric-edge",
                        &doc.path,
                        Anchor::Value(format!("/transition_graph/{field}/{i}")),
                        format!("`{target_id}` does not list `{}` in {back_field}", e.id),
                    )
                    .with_help(format!(
                        "add `{}` to `transition_graph.{back_field}` of `{target_id}`",
                        e.id
                    )),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn one_way_edges() {
        let mut a = valid_entry("cuda/a");
        a["transition_graph"]["leads_to"] = serde_json::json!(["cuda/b"]);
        a["transition_graph"]["frequently_confused_with"] = serde_json::json!(["cuda/b"]);
        let mut b = valid_entry("cuda/b");
        b["transition_graph"]["preceded_by"] = serde_json::json!(["cuda/a"]);
        let diags = only(
            check_files(&[
                ("signatures/cuda/a.json", serde_json::to_string(&a).unwrap()),
                ("signatures/cuda/b.json", serde_json::to_string(&b).unwrap()),
            ]),
            "asymmetric-edge",
        );
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert_eq!(
            diags[0].pointer(),
            Some("/transition_graph/frequently_confused_with/0")
        );
    }
}
