//! `redundant-how` (warning): a workaround's `how` only repeats its `action`.
//!
//! `action` is the short imperative ("Synchronise before freeing"); `how` is the detail a
//! reader needs to do it (which call, where, with what arguments). A `how` whose words are
//! the same as the action's (or contained in it) adds nothing.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;
use crate::text::{normalized_words, word_count};

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    for (i, w) in e.workarounds.iter().enumerate() {
        // `how` can repeat `action` only with no more words than it has; counted first,
        // since `how` is nearly always the longer and lower-casing both allocates.
        if word_count(&w.how) > word_count(&w.action) {
            continue;
        }
        let (action, how) = (normalized_words(&w.action), normalized_words(&w.how));
        if how.is_empty() {
            continue;
        }
        let repeats = how == action || action.windows(how.len()).any(|win| win == how.as_slice());
        if repeats {
            out.push(
                diag(
                    "redundant-how",
                    &doc.path,
                    Anchor::Value(format!("/workarounds/{i}/how")),
                    "`how` repeats `action`",
                )
                .with_help(
                    "keep `action` short and put the concrete steps (calls, flags, code) in `how`",
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn copy_pasted_how() {
        let mut e = valid_entry("cuda/a");
        e["workarounds"][0]["how"] = e["workarounds"][0]["action"].clone();
        assert_eq!(entry_diags(&e, "redundant-how").len(), 1);
    }
}
