//! `empty-dead-end-action` (error): a dead end does not say what was tried.
//!
//! A dead end is "something people try that does not help". Without its `action`, the
//! `why_fails` text explains the failure of nothing, and readers cannot recognise the
//! thing they were about to try. Write the action as a short imperative ("Add
//! `torch.cuda.synchronize()` after the failing call").

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    for (i, d) in e.dead_ends.iter().enumerate() {
        if d.action.trim().is_empty() {
            out.push(
                diag(
                    "empty-dead-end-action",
                    &doc.path,
                    Anchor::Value(format!("/dead_ends/{i}/action")),
                    "dead end has an empty action",
                )
                .with_help("say what people try that does not work; `why_fails` explains why"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn blank_actions() {
        let mut e = valid_entry("cuda/a");
        e["dead_ends"][0]["action"] = "  ".into();
        assert_eq!(
            entry_diags(&e, "empty-dead-end-action")[0].pointer(),
            Some("/dead_ends/0/action")
        );
    }
}
