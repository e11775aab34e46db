//! `rate-basis-missing` (error): a dead end's `fail_rate` or a workaround's `success_rate` says nothing of what it rests on.
//!
//! A rate is a claim about what happened to people who tried something, so every one
//! carries `basis`: `{"kind": "reports", "n": 20, "k": 17, "items": [...]}` when public
//! reports were counted (each with its `url`, `outcome` and the reporter's `quote`),
//! `runs` or `outcomes` when run records or outcome records were, or
//! `{"kind": "estimate"}` when it is an editor's judgement with nothing counted. An
//! estimate is shown as words ("usually fails"), a count as "17 of 20 reports"; a rate
//! without a basis cannot be shown honestly at all.
//!
//! `errata migrate` marks every rate without a basis `estimate` in one go; counting the
//! reports is then the work (see CONTRIBUTING.md, "Evidence").

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    for (list, key) in [("dead_ends", "fail_rate"), ("workarounds", "success_rate")] {
        let items = doc.value.get(list).and_then(|l| l.as_array());
        for (i, item) in items.into_iter().flatten().enumerate() {
            if item.get(key).is_some() && item.get("basis").is_none() {
                out.push(
                    diag(
                        "rate-basis-missing",
                        &doc.path,
                        Anchor::Value(format!("/{list}/{i}/{key}")),
                        format!("`{key}` has no `basis`: counted reports, runs, outcomes, or an estimate"),
                    )
                    .with_help(
                        "add `\"basis\": {\"kind\": \"estimate\"}` when nothing was counted, or the counted reports as `{\"kind\": \"reports\", \"n\": N, \"k\": K, \"items\": [{\"url\", \"outcome\", \"quote\"}]}`",
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn every_rate_without_a_basis_at_once() {
        let mut e = valid_entry("cuda/a");
        assert!(entry_diags(&e, "rate-basis-missing").is_empty());
        e["dead_ends"][0].as_object_mut().unwrap().remove("basis");
        e["workarounds"][0].as_object_mut().unwrap().remove("basis");
        let d = entry_diags(&e, "rate-basis-missing");
        let pointers: Vec<_> = d.iter().map(|d| d.pointer()).collect();
        assert_eq!(
            pointers,
            [
                Some("/dead_ends/0/fail_rate"),
                Some("/workarounds/0/success_rate")
            ]
        );
    }
}
